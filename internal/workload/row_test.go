package workload

import (
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// TestPolicyRowCountsFailures: a policy's unified row holds the E2E p99
// counting a failed request +∞ — null with state bound when failures
// reach its rank, never the successes' figure — and its own states, the
// successes' figures beside them, labelled.
func TestPolicyRowCountsFailures(t *testing.T) {
	rs := make([]record.Request, 100)
	for i := range rs {
		rs[i] = record.Request{OK: i >= 2, E2EMs: float64(i + 1)}
	}
	primary := result.Def{Name: "x", Unit: result.Ms, Direction: result.Lower}.Measure(1, 1, "")
	r := PolicyRow("fifo", reqset.Measure(rs), 10, primary)
	states := r.Metadata[summary.MetaLatencyStates].(map[string]string)
	if r.LatencyP99 != nil || states["latency_p99"] != string(result.Bound) {
		t.Errorf("p99 %v, state %s; want null and bound", r.LatencyP99, states["latency_p99"])
	}
	if r.LatencyP50 == nil || *r.LatencyP50 != 52 || states["latency_p50"] != string(result.Measured) {
		t.Errorf("p50 %v (%s); want 52 (the 50th of 100: the successes 3…100, then the failures)", r.LatencyP50, states["latency_p50"])
	}
	ok, _ := r.Metadata[summary.MetaLatencyOK].(map[string]any)
	if p := ok["p99"].(*float64); p == nil || *p != 100 {
		t.Errorf("the successes' p99 beside it: %v; want 100", ok)
	}
}
