package report

import (
	"math"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
)

// TestSummaryRowsCountFailures: the report's E2E p50 / p99 / max count a
// failed request +∞; the successes' figures show only beside them,
// labelled so.
func TestSummaryRowsCountFailures(t *testing.T) {
	lat := func(n int64) record.Latency {
		return record.Latency{Count: n, P50: 50, P90: 80, P95: 85, P99: 90, P999: 95, Max: 95}
	}
	for _, tc := range []struct {
		name      string
		requests  int
		done      int64
		plain, ok string // "" ok: no successes-only row
	}{
		{"no failure", 100, 100, "50.0 ms / 90.0 ms / 95.0 ms", ""},
		{"failures at the p99's rank", 100, 98, "50.0–80.0 ms / +∞ / +∞", "50.0 ms / 90.0 ms / 95.0 ms"},
		{"every request failed", 10, 0, "+∞ / +∞ / +∞", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Record: &record.Run{Summary: record.Summary{Requests: tc.requests, Failed: tc.requests - int(tc.done), E2E: lat(tc.done)}}}
			got := map[string]string{}
			for _, row := range summaryRows(r) {
				got[row[0]] = row[1]
			}
			if p := got["E2E p50 / p99 / max (a failed request counts +∞)"]; p != tc.plain {
				t.Errorf("plain %q; want %q", p, tc.plain)
			}
			if o := got["E2E p50 / p99 / max, successes only"]; o != tc.ok {
				t.Errorf("successes only %q; want %q", o, tc.ok)
			}
		})
	}
}

// TestBinnedE2ECountsFailures: the latency-over-time figure's p99 of a
// bin counts a failed request +∞ (drawn as a failed mark, not as the
// successes' figure); one failure of 200 leaves it finite.
func TestBinnedE2ECountsFailures(t *testing.T) {
	var samples []Sample
	for i := range 200 {
		samples = append(samples, Sample{E2EMs: float64(i + 1), EndS: 0.5, OK: true})           // bin 0: all answered
		samples = append(samples, Sample{E2EMs: float64(i + 1), EndS: 1.5, OK: i != 7})         // bin 1: one failed
		samples = append(samples, Sample{E2EMs: float64(i + 1), EndS: 2.5, OK: i%50 != 0})      // bin 2: four failed
		samples = append(samples, Sample{E2EMs: float64(i + 1), DueS: 3.5, EndS: 0, OK: false}) // bin 3: lost, by when due
	}
	p50, p99 := binnedE2E(samples, 1, 4)
	for i, want := range []float64{198, 199, math.Inf(1), math.Inf(1)} {
		if p99[i] != want {
			t.Errorf("bin %d p99 %v; want %v", i, p99[i], want)
		}
	}
	if !math.IsInf(p50[3], 1) || math.IsInf(p50[2], 0) {
		t.Errorf("p50s %v: the lost bin's is +∞, the others finite", p50)
	}
}
