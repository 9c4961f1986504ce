package summary

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sagebench/sagebench/internal/record"
)

// TestDistBatchedMatchesDirect: a dist that buffers its values reports,
// at any count (below, at and across its batch), what a histogram
// recording each value at once reports; so do merges.
func TestDistBatchedMatchesDirect(t *testing.T) {
	for _, n := range []int{1, distBatch - 1, distBatch, distBatch + 1, 5*distBatch + 17} {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		d, o := newDist(), newDist()
		direct := hdrhistogram.New(histLowestUS, histHighestUS, histSigFigs)
		maxMs := 0.0
		for i := range n {
			ms := rng.ExpFloat64() * 3
			direct.RecordValue(int64(math.Round(ms * 1000)))
			maxMs = max(maxMs, ms)
			if i%3 == 0 {
				o.add(ms)
			} else {
				d.add(ms)
			}
		}
		d.merge(o)
		want := record.Latency{Count: direct.TotalCount(), Mean: direct.Mean() / 1000, Max: maxMs}
		q := func(p float64) float64 { return min(float64(direct.ValueAtQuantile(p))/1000, maxMs) }
		want.P50, want.P90, want.P95, want.P99, want.P999 = q(50), q(90), q(95), q(99), q(99.9)
		if got := d.latency(); got != want {
			t.Errorf("n=%d: got %+v, want %+v", n, got, want)
		}
		if d.count() != int64(n) {
			t.Errorf("n=%d: count %d", n, d.count())
		}
	}
}
