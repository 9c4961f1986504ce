package traffic_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
)

// writeTrace writes n requests of format at 100 req/s (10 ms apart),
// request i with input 100+i and output 1+i%7 tokens.
func writeTrace(t testing.TB, format string, n int) string {
	t.Helper()
	var b strings.Builder
	switch format {
	case "azure":
		b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
		base := time.Date(2023, 11, 16, 18, 15, 46, 0, time.UTC)
		for i := range n {
			fmt.Fprintf(&b, "%s,%d,%d\n", base.Add(time.Duration(i)*10*time.Millisecond).Format("2006-01-02 15:04:05.0000000"), 100+i, 1+i%7)
		}
	case "burstgpt":
		b.WriteString("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n")
		for i := range n {
			fmt.Fprintf(&b, "%.2f,ChatGPT,%d,%d,%d,Conversation log\n", 5+float64(i)*0.01, 100+i, 1+i%7, 101+i+i%7)
		}
	}
	path := filepath.Join(t.TempDir(), format+".csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTraceReplayWithLengths: Azure and BurstGPT traces replay with
// their arrival times (the intended sends keep the trace's gaps exactly)
// and their lengths (input_tokens and max_tokens of every request).
func TestTraceReplayWithLengths(t *testing.T) {
	for _, format := range []string{"azure", "burstgpt"} {
		t.Run(format, func(t *testing.T) {
			var c capture
			tgt, err := target.Open(context.Background(), target.Config{URL: c.serve(t)}, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tgt.Close(context.Background())
			sched, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessTrace, TraceFile: writeTrace(t, format, 30),
				TraceFormat: format, Count: 30, Speedup: 2}, 1)
			if err != nil {
				t.Fatal(err)
			}
			llm := traffic.LLMShape{Model: "m", Shape: shape.Of(1, 1)}
			items := llmItems(sched.Len(), &llm)
			traffic.FillTrace(items, sched, 0)
			recs := runPhase(t, tgt, llm, sched, items)
			if len(recs) != 30 {
				t.Fatalf("%d records", len(recs))
			}
			for i, r := range recs {
				if r.InputTokens != 100+i || r.OutputTokens != 1+i%7 {
					t.Errorf("request %d: %d→%d tokens, want %d→%d", i, r.InputTokens, r.OutputTokens, 100+i, 1+i%7)
				}
				if gap := time.Duration(r.IntendedNS - recs[0].IntendedNS); gap != time.Duration(i)*5*time.Millisecond {
					t.Errorf("request %d intended %v after the first, want %v (10 ms gaps at speedup 2)", i, gap, time.Duration(i)*5*time.Millisecond)
				}
			}
			sent := map[int]bool{}
			for _, b := range c.bodies {
				sent[tokenizer.Default().Count(b["messages"].([]any)[0].(map[string]any)["content"].(string))] = true
			}
			for i := range 30 {
				if !sent[100+i] {
					t.Errorf("no prompt of %d tokens was sent", 100+i)
				}
			}
		})
	}
}

// TestShareGPTReplay: a ShareGPT dataset replays its conversations' first
// human turns (lengths measured with the tokenizer; max_tokens the
// reference answer's length), or whole conversations as sessions.
func TestShareGPTReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	os.WriteFile(path, []byte(`[
 {"id": "a", "conversations": [{"from": "human", "value": "How does continuous batching work?"}, {"from": "gpt", "value": "Requests join and leave the running batch at every step."},
   {"from": "human", "value": "And chunked prefill?"}, {"from": "gpt", "value": "Long prompts are split across steps."}]},
 {"id": "b", "conversations": [{"from": "human", "value": "Name three vector indexes."}, {"from": "gpt", "value": "HNSW, IVF and flat."}]}
]`), 0o644)
	tok := tokenizer.Default()
	for _, sessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("sessions=%v", sessions), func(t *testing.T) {
			var c capture
			tgt, err := target.Open(context.Background(), target.Config{URL: c.serve(t)}, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tgt.Close(context.Background())
			llm := traffic.LLMShape{Model: "m", Shape: shape.Shape{InputTokens: shape.FixedDist(1), OutputTokens: shape.FixedDist(9),
				Source: &shape.Source{File: path, Format: "sharegpt", Sessions: sessions}}}
			if err := llm.Validate("test.llm"); err != nil {
				t.Fatal(err)
			}
			items := llmItems(6, &llm)
			recs := runPhase(t, tgt, llm, every(6, 5*time.Millisecond), items)
			want := map[string][2]int{
				"How does continuous batching work?": {tok.Count("How does continuous batching work?"), tok.Count("Requests join and leave the running batch at every step.")},
				"Name three vector indexes.":         {tok.Count("Name three vector indexes."), tok.Count("HNSW, IVF and flat.")},
			}
			turns := 0
			pairs := map[[2]int]bool{}
			for _, w := range want {
				pairs[w] = true
			}
			for _, r := range recs {
				if r.Turn > 1 {
					turns++
				} else if !pairs[[2]int{r.InputTokens, r.OutputTokens}] {
					t.Errorf("%s: %d→%d tokens is no conversation's first turn", r.ID, r.InputTokens, r.OutputTokens)
				}
			}
			for _, b := range c.bodies {
				msgs := b["messages"].([]any)
				if _, ok := want[msgs[0].(map[string]any)["content"].(string)]; !ok {
					t.Errorf("sent %v, which opens no conversation of the dataset", msgs[0])
				}
			}
			if sessions != (turns > 0) {
				t.Errorf("%d later turns with sessions %v", turns, sessions)
			}
		})
	}
}

// BenchmarkReplayLag replays 300 requests at 100 req/s from an Azure and
// a BurstGPT trace, and a ShareGPT dataset on a 100 req/s constant
// schedule, against an instant loopback server with the precise pacer,
// (connections warmed, as a run does) and reports the arrival error: the p99 and max of actual − intended
// send (the intended sends are the trace's times, exactly). Run it with
// -benchtime 1x (each replay takes 3 s).
func BenchmarkReplayLag(b *testing.B) {
	share := filepath.Join(b.TempDir(), "sharegpt.json")
	os.WriteFile(share, []byte(`[{"conversations": [{"from": "human", "value": "What is goodput?"}, {"from": "gpt", "value": "Requests per second that met their SLO."}]}]`), 0o644)
	shape.DefaultSynth() // built before traffic, as a run does
	for _, format := range []string{"azure", "burstgpt", "sharegpt"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				var c capture
				tgt, err := target.Open(context.Background(), target.Config{URL: c.serve(b)}, target.Options{})
				if err != nil {
					b.Fatal(err)
				}
				llm := traffic.LLMShape{Model: "m", Shape: shape.Of(1, 1)}
				sched := every(300, 10*time.Millisecond)
				if format == "sharegpt" {
					llm.Source = &shape.Source{File: share, Format: "sharegpt"}
				} else if sched, err = load.NewSchedule(load.ScheduleConfig{Process: load.ProcessTrace, TraceFile: writeTrace(b, format, 300), TraceFormat: format, Count: 300}, 1); err != nil {
					b.Fatal(err)
				}
				if err := llm.Validate("bench.llm"); err != nil {
					b.Fatal(err)
				}
				items := llmItems(sched.Len(), &llm)
				traffic.FillTrace(items, sched, 0)
				tgt.Client().Warm(context.Background(), 8) // as a run does before its traffic
				recs := runPhase(b, tgt, llm, sched, items)
				lags := make([]int, 0, len(recs))
				for _, r := range recs {
					lags = append(lags, int(r.LagMs*1000))
				}
				s := shape.Summarize(lags)
				b.ReportMetric(float64(s.P99)/1000, "lag-p99-ms")
				b.ReportMetric(float64(s.Max)/1000, "lag-max-ms")
				tgt.Close(context.Background())
			}
		})
	}
}
