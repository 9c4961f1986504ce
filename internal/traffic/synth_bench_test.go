package traffic

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/workload"
)

// benchShape is a production-like shape: lognormal inputs around 1,000
// tokens, uniform outputs, a shared prefix on half the requests.
func benchShape(b *testing.B) LLMShape {
	llm := LLMShape{Model: "m", Stream: true, Shape: shape.Shape{
		InputTokens:  shape.Dist{Kind: shape.LogNormal, Median: 1000, Sigma: 0.3, Min: 1, Max: 4000},
		OutputTokens: shape.Dist{Kind: shape.Uniform, Min: 64, Max: 256},
		Prefix:       &shape.Prefix{Groups: 8, Tokens: 500, Share: 0.5}}}
	if err := llm.Validate("bench.llm"); err != nil {
		b.Fatal(err)
	}
	return llm
}

// BenchmarkChatSynthesis is one request's synthesis up to its wire
// request: lengths drawn, prefix and prompt text (memoized: substrings),
// messages, headers, output control.
func BenchmarkChatSynthesis(b *testing.B) {
	s := Shapes{LLM: benchShape(b)}
	env := &workload.Env{}
	env.Synth() // the memoized text is built once per run, before traffic
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		it := Item{Type: "llm", Tenant: "t", Priority: "normal", Text: seed}
		var rec record.Request
		req := s.chat(env, &rec, &it, http.Header{})
		if len(req.Messages) == 0 || rec.InputTokens == 0 {
			b.Fatal("empty request")
		}
		seed++
	}
}

// BenchmarkPacedSynthesis is the driver at 5,000 req/s with each hit
// synthesizing its request and then holding its worker 1 ms as a request
// in flight would: the delivered rate and the dispatch lag show whether
// synthesis slows the schedule.
func BenchmarkPacedSynthesis(b *testing.B) {
	s := Shapes{LLM: benchShape(b)}
	env := &workload.Env{}
	env.Synth()
	sched, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessConstant, Rate: 5000, Count: max(b.N, 5000)}, 1)
	if err != nil {
		b.Fatal(err)
	}
	d := &load.Driver{}
	b.ResetTimer()
	rep := d.Run(context.Background(), sched, func(_ context.Context, i int, _ time.Time) {
		it := Item{Type: "llm", Tenant: "t", Priority: "normal", Text: uint64(i)}
		var rec record.Request
		s.chat(env, &rec, &it, http.Header{})
		time.Sleep(time.Millisecond)
	})
	b.ReportMetric(rep.DeliveredRate(sched), "delivered-req/s")
	b.ReportMetric(float64(rep.DispatchLag.P99.Microseconds()), "lag-p99-µs")
}
