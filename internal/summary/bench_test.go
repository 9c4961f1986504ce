package summary

import (
	"testing"
	"time"
)

// BenchmarkCollectorAdd measures the cost of summarising one streamed LLM
// request (32 tokens) — it runs on the request's goroutine during a run.
func BenchmarkCollectorAdd(b *testing.B) {
	c := NewCollector()
	r := req("fifo", "llm", 1, time.Millisecond, 210, 0.2, true)
	r.FirstToken, r.TTFTMs, r.TPOTMs = 40e6, 40, 6
	for i := range 32 {
		r.TokenNS = append(r.TokenNS, int64(40e6+i*6e6))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Add(r)
		}
	})
}
