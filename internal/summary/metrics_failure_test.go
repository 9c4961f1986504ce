package summary

import (
	"math"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// TestE2EQuantileCountsFailuresInfinite: the run-level E2E quantiles
// count a failed request as +∞ — measured when the failures leave the
// rank among the successes where it was, bracketed from the successes'
// own figure to the next one their summary holds when they move it, +∞ (a bound open above)
// when failures reach the rank, never when every request failed; the
// successes' figure is never given as the quantile itself.
func TestE2EQuantileCountsFailuresInfinite(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name           string
		requests, done int
		state          result.State
		lo, hi         float64
	}{
		{"no failure", 100, 100, result.Measured, 0, 0},
		{"one failure, the same rank among the successes", 200, 199, result.Measured, 0, 0},
		{"failures below the rank, bracketed by the next figure", 1000, 995, result.Bound, 40, 70},
		{"failures at the p99's rank", 100, 98, result.Bound, 40, inf},
		{"every request failed", 10, 0, result.Never, 0, 0},
		{"nothing sent", 0, 0, result.NotMeasurable, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := record.Summary{Requests: c.requests, E2E: record.Latency{Count: int64(c.done), P99: 40, P999: 70, Max: 90}}
			var m result.Metric
			for _, x := range Metrics(s) {
				if x.Name == DefE2EP99.Name {
					m = x
				}
			}
			if err := m.Check(); err != nil {
				t.Fatalf("%+v breaks the model: %v", m, err)
			}
			if m.State != c.state {
				t.Fatalf("state %s (%s); want %s", m.State, result.Format(m), c.state)
			}
			if c.state == result.Measured && m.Value != 40 {
				t.Errorf("value %v; want the successes' 40 ms (no failure)", m.Value)
			}
			if c.state == result.Bound && (m.Interval == nil || m.Interval[0] != c.lo || m.Interval[1] != c.hi) {
				t.Errorf("interval %v; want [%v, %v]", m.Interval, c.lo, c.hi)
			}
		})
	}
}
