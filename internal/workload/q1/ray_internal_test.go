package q1

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

func TestRayRunIDIsDeterministic(t *testing.T) {
	start := time.Unix(1700000000, 5)
	tests := []struct {
		name string
		env  workload.Env
		want string
	}{
		{"the runner's id", workload.Env{RunID: "q1-ray-1-abcd1234", Repetition: 1, Start: start}, "q1-ray-1-abcd1234"},
		{"derived from repetition and start", workload.Env{Repetition: 2, Start: start}, "q1-ray-2-17979cfe362a0005"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rayRunID(&tc.env); got != tc.want || rayRunID(&tc.env) != got {
				t.Fatalf("rayRunID = %q, want %q every time", got, tc.want)
			}
		})
	}
}

// TestRecordRay: records are re-based onto the run's start, get Q1's
// SLO verdicts, and arrivals the job never reported are recorded as
// cancelled only when they were due before it stopped; the embed stage
// carries the question's length, as on sage.
func TestRecordRay(t *testing.T) {
	q := &q1Ray{q1: &q1{cfg: Default(true)}}
	q.cfg.Schedule.Count = 3
	q.cfg.Schedule.Rate = 1000
	start := time.Unix(100, 0)
	var got []record.Request
	env := &workload.Env{Start: start, Record: func(r record.Request) { got = append(got, r) }, Sent: func() {}}
	rec := func(r record.Request) json.RawMessage { b, _ := json.Marshal(r); return b }
	queue := 1.5
	out := ray.Output{Meta: &ray.Meta{StartUnixNS: start.UnixNano() + 1000}, Records: []json.RawMessage{
		rec(record.Request{ID: "txn-000000/embed", Kind: "stage", Stage: "embed", TxnID: "txn-000000", IntendedNS: 5, SentNS: 6, EndNS: 7, E2EMs: 300, OK: true}),
		rec(record.Request{ID: "txn-000000", Kind: "txn", TxnID: "txn-000000", IntendedNS: 1, SentNS: 2, EndNS: 9, E2EMs: 10, OK: true}),
		rec(record.Request{ID: "txn-000000/retrieve", Kind: "stage", Stage: "retrieve", TxnID: "txn-000000", IntendedNS: 7, EndNS: 8, E2EMs: 1, OK: true,
			Retries: 1, QueueMs: &queue, ServerE2EMs: 0.5, FirstAnswerToken: 8, TokenNS: []int64{8}}),
	}}
	sched, err := load.NewSchedule(q.cfg.Schedule, 1)
	if err != nil {
		t.Fatal(err)
	}
	gen, _ := json.Marshal(map[string]any{"id": "txn-000000/generate", "kind": "stage", "stage": "generate", "txn_id": "txn-000000",
		"intended_ns": 8, "end_ns": 9, "ok": true, "prompt": []openai.Message{{Role: "system", Content: "Answer."}, {Role: "user", Content: "Context:\n[1] a b c\n\nQuestion: why"}}})
	out.Records = append(out.Records, gen)
	phase := q.recordRay(env, sched, out, []int{24, 30, 17})
	want := promptTokens(env.Synth(), []openai.Message{{Role: "system", Content: "Answer."}, {Role: "user", Content: "Context:\n[1] a b c\n\nQuestion: why"}})
	if len(got) != 4 || got[3].Stage != "generate" || want < 5 || got[3].InputTokens != want || got[0].InputTokens != want {
		t.Fatalf("generate stage %+v, txn input_tokens %d: want the sent prompt's %d tokens on both", got[len(got)-1], got[0].InputTokens, want)
	}
	got = got[:3]
	if len(got) != 3 || got[0].Kind != "txn" || got[0].IntendedNS != 1001 || got[0].EndNS != 1009 {
		t.Fatalf("records %+v: want the txn first, offsets + 1000 ns", got)
	}
	if got[1].InputTokens != 24 || got[2].InputTokens != 0 {
		t.Errorf("input_tokens: embed %d, retrieve %d; want the question's 24 on the embed stage only", got[1].InputTokens, got[2].InputTokens)
	}
	if r := got[2]; r.Retries != 1 || r.QueueMs == nil || *r.QueueMs != 1.5 || r.ServerE2EMs != 0.5 || r.FirstAnswerToken != 1008 || r.TokenNS[0] != 1008 {
		t.Errorf("retrieve record %+v: the target's fields lost or not re-based", r)
	}
	if got[0].SLOMet || got[1].SLOMet || !got[2].SLOMet {
		t.Errorf("SLO: txn %v, embed (300ms > 250ms) %v, retrieve %v; want false, false, true", got[0].SLOMet, got[1].SLOMet, got[2].SLOMet)
	}
	if !phase.Interrupted || phase.Start != 1000 || phase.End != 1009 {
		t.Errorf("phase %+v: want interrupted (2 arrivals unreported), start 1000ns, end 1009ns", phase)
	}
}

// TestRayPlanKeepsStageSettings: each stage of the plan carries its own
// settings, as the sage backend's operators read them (a stage's model
// and max_tokens params over the workload's, top_k for retrieve), and
// the connections to warm: openai.WarmConns of the rate, at most one per
// worker of the stage.
func TestRayPlanKeepsStageSettings(t *testing.T) {
	q := &q1Ray{q1: &q1{cfg: Default(true)}}
	q.cfg.TopK = 3
	q.cfg.Graph.Stages[0].Params = map[string]string{"model": "emb-2"}
	q.cfg.Graph.Stages[2].Params = map[string]string{"model": "llm-2", "max_tokens": "7"}
	sched, err := load.NewSchedule(q.cfg.Schedule, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := q.rayPlan(2, sched, make([]corpus.Query, sched.Len()), "r")
	want := []ray.Stage{
		{Name: "embed", Op: "embed", Model: "emb-2", Parallelism: 2, WarmConns: 2, TimeoutS: 10},
		{Name: "retrieve", Op: "retrieve", TopK: 3, Parallelism: 2, WarmConns: 2, TimeoutS: 10},
		{Name: "generate", Op: "generate", Model: "llm-2", MaxTokens: 7, Parallelism: 32, WarmConns: openai.WarmConns(20), TimeoutS: 60},
	}
	if !reflect.DeepEqual(p.Stages, want) {
		t.Fatalf("stages\n%+v\nwant\n%+v", p.Stages, want)
	}
	if p.Version != ray.PlanVersion || p.LLM != q.cfg.LLM.Model || len(p.Arrivals) != sched.Len() {
		t.Fatalf("plan %+v", p)
	}
}

// TestRayRecall: recall@k on the Ray backend comes from the document ids
// the driver's retrieve stage reported, judged against exact search on
// the local corpus: exact answers score 1, the k worst documents 0 (the
// metric can fail), a failed retrieve does not count, and an external
// target's index is not judged at all.
func TestRayRecall(t *testing.T) {
	ix, err := corpus.New(corpus.Config{Size: 200, Dim: 16, Seed: 7}, func(s string) []float32 { return corpus.Vector(s, 16) })
	if err != nil {
		t.Fatal(err)
	}
	qs := ix.Queries(20, 6, 3)
	const k = 5
	exact, worst := func(i int) []int {
		hits, _ := ix.Exact(corpus.Vector(qs[i].Text, 16), k)
		ids := make([]int, len(hits))
		for j, h := range hits {
			ids[j] = h.ID
		}
		return ids
	}, func(i int) []int {
		hits, _ := ix.Exact(corpus.Vector(qs[i].Text, 16), ix.Len())
		ids := make([]int, 0, k)
		for _, h := range hits[len(hits)-k:] {
			ids = append(ids, h.ID)
		}
		return ids
	}
	out := func(ids func(int) []int, failLast bool) ray.Output {
		var o ray.Output
		for i := range qs {
			ok := !(failLast && i == len(qs)-1)
			b, _ := json.Marshal(map[string]any{"txn_id": txnID(i), "kind": "stage", "type": "retrieve", "ok": ok, "retrieved_ids": ids(i)})
			o.Records = append(o.Records, b)
		}
		return o
	}
	q := &q1Ray{q1: &q1{cfg: &Config{TopK: k}}}
	tests := []struct {
		name     string
		embedded bool
		out      ray.Output
		state    string
		value    float64
		n        int
	}{
		{"exact search's answers", true, out(exact, true), "measured", 1, len(qs) - 1},
		{"the k worst documents", true, out(worst, false), "measured", 0, len(qs)},
		{"an external target", false, out(exact, false), "not_measurable", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := q.rayPipeline(tc.embedded, ix, qs, tc.out).recall()[0]
			if string(m.State) != tc.state || (m.Measured() && (m.Value != tc.value || m.N != tc.n)) {
				t.Errorf("recall %+v; want %s %v of %d", m, tc.state, tc.value, tc.n)
			}
		})
	}
}
