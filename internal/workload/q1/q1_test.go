package q1

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/workload"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/stack"
)

func TestQ1ConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"top_k 0", func(c *Config) { c.TopK = 0 }, "q1.top_k"},
		{"negative query words", func(c *Config) { c.QueryWords = -1 }, "q1.query_words"},
		{"no question length", func(c *Config) { c.QuestionTokens = shape.Dist{} }, "q1.question_tokens: dist is missing"},
		{"question too long", func(c *Config) { c.QuestionTokens = shape.FixedDist(MaxQuestionTokens + 1) }, "q1.question_tokens: can draw 8193"},
		{"unbounded lognormal", func(c *Config) {
			c.QuestionTokens = shape.Dist{Kind: shape.LogNormal, Median: 20, Sigma: 0.5}
		}, "bound it to ≤ 8192"},
		{"bounded lognormal", func(c *Config) {
			c.QuestionTokens = shape.Dist{Kind: shape.LogNormal, Median: 20, Sigma: 0.5, Max: 64}
		}, ""},
		{"no embedding model", func(c *Config) { c.Embedding.Model = "" }, "q1.embedding.model"},
		{"no max tokens", func(c *Config) { c.LLM.MaxTokens = 0 }, "q1.llm"},
		{"negative slo", func(c *Config) { c.SLO.Retrieve = -time.Second }, "q1.slo"},
		{"empty index", func(c *Config) { c.Index.Size = 0 }, "q1.index"},
		{"bad schedule", func(c *Config) { c.Schedule.Rate = -1 }, "q1.schedule"},
		{"unknown operator", func(c *Config) { c.Graph.Stages[1].Operator = "retreive" }, `unknown operator "retreive"`},
		{"missing stage", func(c *Config) { c.Graph.Stages = c.Graph.Stages[:2] }, "embed → retrieve → generate"},
		{"duplicate stage name", func(c *Config) { c.Graph.Stages[2].Name = "embed" }, "already used"},
		{"stage name too long", func(c *Config) { c.Graph.Stages[0].Name = strings.Repeat("e", 300) }, "q1.graph.stages[0].name: 300 bytes; at most 64"},
		{"negative parallelism", func(c *Config) { c.Graph.Stages[0].Parallelism = -1 }, "parallelism"},
		{"width of no stage", func(c *Config) { c.Width = map[string]int{"genrate": 2} }, "q1.width.genrate: not an operator"},
		{"zero width", func(c *Config) { c.Width = map[string]int{"embed": 0} }, "must be in [1, 1024]"},
		{"bad param", func(c *Config) { c.Graph.Stages[0].Params = map[string]string{"temperature": "1"} }, `unknown param "temperature"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, quick := range []bool{false, true} {
				c := Default(quick)
				tc.change(c)
				err := c.Validate()
				if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
					t.Fatalf("quick=%v: Validate() = %v, want %q", quick, err, tc.want)
				}
			}
		})
	}
}

func TestQ1Scales(t *testing.T) {
	full, quick := Default(false), Default(true)
	if full.Schedule.Count != 1000 || full.Schedule.Rate != 40 || full.TopK != 5 {
		t.Errorf("full scale %+v, want 1000 transactions at 40 tx/s, k 5", full.Schedule)
	}
	if quick.Schedule.Count != 100 || quick.Schedule.Rate != 20 || quick.LLM.MaxTokens >= full.LLM.MaxTokens {
		t.Errorf("quick scale %+v, llm %+v", quick.Schedule, quick.LLM)
	}
}

func TestQ1Override(t *testing.T) {
	c := Default(true)
	rate, n, ratio := 7.0, 11, 0.5
	ignored := c.Override(workload.Overrides{Rate: &rate, TotalRequests: &n, LLMRatio: &ratio})
	if c.Schedule.Rate != 7 || c.Schedule.Count != 11 {
		t.Errorf("schedule %+v after --rate 7 --total-requests 11", c.Schedule)
	}
	if len(ignored) != 1 || ignored[0] != "llm-ratio" {
		t.Errorf("ignored %v, want [llm-ratio]", ignored)
	}
	d := 3 * time.Second
	c.Override(workload.Overrides{Duration: &d})
	if c.Schedule.Duration != d || c.Schedule.Count != 0 {
		t.Errorf("--duration alone: %+v", c.Schedule)
	}
}

func TestQ1StackYAMLMatchesTheIndex(t *testing.T) {
	q := &q1{cfg: Default(true)}
	q.cfg.Index = Q1Index{Size: 1234, Seed: 9, M: 8, EfSearch: 40}
	sc, err := stack.ParseConfig(q.StackYAML())
	if err != nil {
		t.Fatalf("the stack rejects Q1's YAML %q: %v", q.StackYAML(), err)
	}
	if sc.Index.Size != 1234 || sc.Index.Seed != 9 || sc.Index.M != 8 || sc.Index.EfSearch != 40 {
		t.Errorf("stack index %+v, want q1.index %+v", sc.Index, q.cfg.Index)
	}
	if len(sc.Engines) != len(stack.DefaultConfig().Engines) {
		t.Errorf("Q1's stack changed the engine pool: %+v", sc.Engines)
	}
}

func TestQ1DeployGraphTakesParallelism(t *testing.T) {
	c := Default(true)
	c.Graph.Stages[2].Parallelism = 7 // an explicit stage value wins
	g := c.deployGraph(3)
	want := []int{3, 3, 7}
	for i, s := range g.Stages {
		if got := stageParallelism(g, s); got != want[i] {
			t.Errorf("stage %s: parallelism %d, want %d", s.Name, got, want[i])
		}
	}
	c = Default(true) // the default width of generate multiplies --parallelism
	g = c.deployGraph(3)
	want = []int{3, 3, 48}
	for i, s := range g.Stages {
		if got := stageParallelism(g, s); got != want[i] {
			t.Errorf("stage %s: parallelism %d, want %d", s.Name, got, want[i])
		}
	}
	if c.Graph.Parallelism != 0 {
		t.Error("deployGraph changed the configuration")
	}
}

func TestStageErrClass(t *testing.T) {
	tests := []struct {
		name   string
		se     dataflow.StageError
		class  string
		status int
	}{
		{"call failed", dataflow.StageError{Kind: dataflow.KindError,
			Message: (&rag.CallError{Stage: "retrieve", Class: "http_429", Status: 429, Err: errTest}).Error()}, "http_429", 429},
		{"timeout", dataflow.StageError{Kind: dataflow.KindTimeout, Message: "no result within 1s"}, ClassStageTimeout, 0},
		{"panic", dataflow.StageError{Kind: dataflow.KindPanic, Message: "runtime error: index out of range"}, ClassStagePanic, 0},
		{"other error", dataflow.StageError{Kind: dataflow.KindError, Message: "something else"}, ClassStageError, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			class, status := stageErrClass(&tc.se)
			if class != tc.class || status != tc.status {
				t.Fatalf("stageErrClass = %q, %d; want %q, %d", class, status, tc.class, tc.status)
			}
		})
	}
}

var errTest = errString("test")

type errString string

func (e errString) Error() string { return string(e) }

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if p := reqset.Quantile(xs, 0.5); p != 3 {
		t.Errorf("p50 = %v", p)
	}
	if p := reqset.Quantile(xs, 0.99); p != 5 {
		t.Errorf("p99 = %v", p)
	}
	if p := reqset.Quantile(nil, 0.5); !math.IsNaN(p) {
		t.Errorf("p50 of nothing = %v, want NaN", p)
	}
	if xs[0] != 5 {
		t.Error("percentile sorted its input")
	}
}

// TestQ1RecallAtK: recall@k compares the first k hits with exact search
// and divides by what exact search can return (a corpus smaller than k
// answers perfectly with fewer than k documents); hits beyond k do not
// count.
func TestQ1RecallAtK(t *testing.T) {
	const dim = 16
	embed := func(s string) []float32 { return corpus.Vector(s, dim) }
	tests := []struct {
		name       string
		size, k    int
		hits       func(exact []corpus.Hit, all []corpus.Hit) []corpus.Hit
		wantRecall float64
	}{
		{"perfect", 50, 5, func(exact, _ []corpus.Hit) []corpus.Hit { return exact }, 1},
		{"corpus smaller than k", 3, 5, func(exact, _ []corpus.Hit) []corpus.Hit { return exact }, 1},
		{"hits beyond k do not count", 50, 2, func(exact, all []corpus.Hit) []corpus.Hit {
			return append([]corpus.Hit{all[len(all)-1], all[len(all)-2]}, exact...) // the two worst, then the best two
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := corpus.New(corpus.Config{Size: tc.size, Dim: dim, Seed: 7}, embed)
			if err != nil {
				t.Fatal(err)
			}
			c := newQ1Collect(dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "s"}}}, true, ix, tc.k)
			q := ix.Queries(1, 4, 7)[0]
			vec := embed(q.Text)
			exact, err := ix.Exact(vec, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			all, err := ix.Exact(vec, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			txn := &rag.Txn{Vector: vec, QueryDoc: q.DocID}
			for _, h := range tc.hits(exact, all) {
				txn.Hits = append(txn.Hits, rag.Hit{ID: h.ID, Score: h.Score, Text: ix.Doc(h.ID)})
			}
			t0 := time.Now()
			c.add(0, dataflow.Record{Hops: []dataflow.Hop{{Stage: "s", Enqueued: t0, Started: t0, Ended: t0}}}, txn, t0, t0, t0)
			ms := c.seal().recall()
			if got := ms[0]; got.Name != "recall_at_k" || !got.Measured() || math.Abs(got.Value-tc.wantRecall) > 1e-9 {
				t.Fatalf("recall_at_k = %+v, want %v", got, tc.wantRecall)
			}
		})
	}
}

// TestPipelineCapped: pipeline.json keeps the rows that fit its bound,
// the first by transaction, and the figures say over how many.
func TestPipelineCapped(t *testing.T) {
	var rows []txnRow
	for i := range 10 {
		rows = append(rows, txnRow{Seq: i, QueueMs: []float64{1, 2, 3}, SourceDoc: i, Retrieved: []int{i, i + 1}, e2e: 10, lag: 1, stageMs: []float64{3, 3, 3}})
	}
	exact := func(r txnRow) ([]int, error) { return []int{r.Seq}, nil }
	all := sealRows(2, rows, "", exact, 1<<20)
	if all.Dropped != 0 || len(all.Rows) != 10 || all.cutNote() != "" {
		t.Fatalf("uncapped: %d rows, %d dropped, note %q", len(all.Rows), all.Dropped, all.cutNote())
	}
	b, _ := json.Marshal(all.Rows[0])
	capped := sealRows(2, rows, "", exact, 4*(len(b)+1))
	if capped.Dropped != 6 || len(capped.Rows) != 4 || capped.Rows[3].Seq != 3 {
		t.Fatalf("capped at 4 rows' bytes: %d rows, %d dropped", len(capped.Rows), capped.Dropped)
	}
	g := dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	st := statsOf(g, capped)
	recall := capped.recall()[0]
	if !recall.Measured() || recall.N != 4 || recall.Value != 1 || !strings.Contains(recall.Reason, "over the first 4 of 10 transactions") {
		t.Errorf("recall %+v; want 1 over 4 rows, saying so", recall)
	}
	for _, m := range st.metrics() {
		if m.Measured() && !strings.Contains(m.Reason, "over the first 4 of 10") {
			t.Errorf("%s: %+v does not say it is over the rows kept", m.Name, m)
		}
	}
	if tb, ok := st.stageTable(); !ok || !strings.Contains(tb.Note, "pipeline.json holds at most 32 MiB") {
		t.Errorf("stage table note %q", tb.Note)
	}
	failing := sealRows(2, rows, "", func(r txnRow) ([]int, error) {
		if r.Seq == 5 {
			return nil, errTest
		}
		return []int{r.Seq}, nil
	}, 1<<20)
	if failing.RecallNotMeasurable != "test" || failing.Rows[0].Exact != nil || failing.recall()[0].Measured() {
		t.Errorf("an exact search failing: %+v", failing)
	}
}
