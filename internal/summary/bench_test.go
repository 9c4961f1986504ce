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

// BenchmarkCollectorAddEmbedding is the summary's cost of one embeddings
// request, as the run's sink adds it.
func BenchmarkCollectorAddEmbedding(b *testing.B) {
	c := NewCollector()
	r := req("fifo", "embedding", 1, time.Millisecond, 0.3, 0.1, true)
	b.ReportAllocs()
	for b.Loop() {
		c.Add(r)
	}
}
