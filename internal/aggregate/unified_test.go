package aggregate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// synthRun is a finished run of 100 requests of which failed failed; the
// successes' E2E p50 is 50 ms and p99 90 ms.
func synthRun(seed int64, failed int) record.Run {
	s := record.Summary{Requests: 100, Failed: failed, SuccessRate: float64(100-failed) / 100,
		E2E: record.Latency{Count: int64(100 - failed), Mean: 55, P50: 50, P90: 80, P95: 85, P99: 90, P999: 95, Max: 95}}
	res := result.New("ok", recovery.Measure(4, 1, ""), summary.Metrics(s)...)
	return record.Run{Workload: "Q2", Name: "ControlMix", RunID: "r" + string(rune('0'+seed)), Seed: seed, Valid: true, Complete: true,
		Summary: s, Result: &res}
}

// TestUnifiedLatencyCountsFailures: a unified row's latency columns are
// the E2E quantiles counting a failed request +∞ — a null cell with its
// state (never the successes' 90 ms) when failures reach the p99's rank,
// the successes' figures only beside them, labelled.
func TestUnifiedLatencyCountsFailures(t *testing.T) {
	for _, tc := range []struct {
		name            string
		failed          int
		p99             *float64
		p99State        string
		p50             *float64
		successesBeside bool
	}{
		{"no failure", 0, record.F(90), "measured", record.F(50), false},
		{"one failure leaves the p99's rank where it was", 1, record.F(90), "measured", record.F(50), true},
		{"two failures reach the p99's rank", 2, nil, "bound", nil, true},
		{"every request failed", 100, nil, "never", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := synthRun(1, tc.failed)
			u := Row(&run, Shape{})
			states, _ := u.Metadata[summary.MetaLatencyStates].(map[string]string)
			if !same(u.LatencyP99, tc.p99) || states["latency_p99"] != tc.p99State || !same(u.LatencyP50, tc.p50) {
				t.Errorf("p99 %v (%s), p50 %v; want %v (%s), %v; metadata %v", show(u.LatencyP99), states["latency_p99"], show(u.LatencyP50),
					show(tc.p99), tc.p99State, show(tc.p50), u.Metadata)
			}
			ok, beside := u.Metadata[summary.MetaLatencyOK].(map[string]any)
			if beside != tc.successesBeside || beside && (*ok["p99"].(*float64) != 90 || !strings.Contains(ok["note"].(string), "successes only")) {
				t.Errorf("successes' figures %v; want beside: %v, labelled", ok, tc.successesBeside)
			}
			if _, err := json.Marshal(u); err != nil {
				t.Fatal(err)
			}
			// the aggregate over repetitions follows its estimates
			runs := []record.Run{synthRun(1, tc.failed), synthRun(2, tc.failed)}
			a := Runs(runs, 0.95)
			ua := AggregateRow(a, &runs[1], Shape{}, "agg")
			as, _ := ua.Metadata[summary.MetaLatencyStates].(map[string]string)
			if (ua.LatencyP99 != nil) != (tc.p99 != nil) || (tc.p99 == nil && as["latency_p99"] == "measured") {
				t.Errorf("aggregate p99 %v (%s); want a number only when measured", show(ua.LatencyP99), as["latency_p99"])
			}
		})
	}
}

func same(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}
