package summary

import (
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// The run-level metrics every result carries besides its Q's own.
var (
	DefGoodput       = result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}
	DefThroughput    = result.Def{Name: "throughput", Unit: result.ReqPerS, Direction: result.Higher}
	DefSLOAttainment = result.Def{Name: "slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	DefSuccessRate   = result.Def{Name: "success_rate", Unit: result.Fraction, Direction: result.Higher}
	DefE2EP50        = result.Def{Name: "e2e_p50_ms", Unit: result.Ms, Direction: result.Lower}
	DefE2EP95        = result.Def{Name: "e2e_p95_ms", Unit: result.Ms, Direction: result.Lower}
	DefE2EP99        = result.Def{Name: "e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}
	DefLagP99        = result.Def{Name: "schedule_lag_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// Metrics returns s's run-level metrics (over every request of the run,
// whatever its phase): goodput, throughput, SLO attainment, success
// rate, the E2E p50/p95/p99 of the requests that completed and the
// schedule lag p99 — each not measurable when the run has no request to
// measure it on.
func Metrics(s record.Summary) []result.Metric {
	const noneSent, noneDone = "no request was sent", "no request completed"
	n, done, lag := s.Requests, int(s.E2E.Count), int(s.ScheduleLag.Count)
	return []result.Metric{
		DefGoodput.Measure(s.Goodput, n, noneSent),
		DefThroughput.Measure(s.Throughput, n, noneSent),
		DefSLOAttainment.Measure(s.SLOAttainment, n, noneSent),
		DefSuccessRate.Measure(s.SuccessRate, n, noneSent),
		DefE2EP50.Measure(s.E2E.P50, done, noneDone),
		DefE2EP95.Measure(s.E2E.P95, done, noneDone),
		DefE2EP99.Measure(s.E2E.P99, done, noneDone),
		DefLagP99.Measure(s.ScheduleLag.P99, lag, noneSent),
	}
}
