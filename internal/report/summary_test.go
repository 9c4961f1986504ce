package report

import (
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
