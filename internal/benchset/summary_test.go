package benchset

import (
	"testing"

	"github.com/sagebench/sagebench/internal/record"
)

// TestSummaryP99CountsFailures: a run's p99-ms is the E2E p99 counting a
// failed request +∞: the successes' figure only when the failures leave
// its rank where it was, else no p99-ms at all (never the successes'
// figure in its stead), and no input problem.
func TestSummaryP99CountsFailures(t *testing.T) {
	for _, tc := range []struct {
		name           string
		requests, done int
		has            bool
	}{
		{"none failed", 100, 100, true},
		{"one of 200 leaves the rank", 200, 199, true},
		{"two of 100 reach it", 100, 98, false},
		{"all failed", 10, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSet("x", "x")
			run := &record.Run{Workload: "Q2", RunID: "r", Summary: record.Summary{Requests: tc.requests,
				E2E: record.Latency{Count: int64(tc.done), Mean: 50, P50: 50, P90: 80, P95: 85, P99: 90, P999: 95, Max: 95}}}
			r := summaryResult(s, run, "run.json")
			got := false
			for _, v := range r.Values {
				if v.Unit == "p99-ms" || v.OrigUnit == "p99-ms" {
					got = true
					if v.Value != 90 && v.OrigValue != 90 {
						t.Errorf("p99-ms %+v; want 90", v)
					}
				}
			}
			if got != tc.has || len(s.Problems) != 0 {
				t.Errorf("p99-ms present %v, problems %v; want %v, none", got, s.Problems, tc.has)
			}
		})
	}
}
