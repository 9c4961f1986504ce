package summary

import (
	"fmt"
	"math"

	"github.com/sagebench/sagebench/internal/protocol"
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
	DefTTFTP50       = result.Def{Name: "ttft_p50_ms", Unit: result.Ms, Direction: result.Lower}
	DefTTFTP99       = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// Metrics returns s's run-level metrics (over every request of the run,
// whatever its phase): goodput, throughput, SLO attainment, success
// rate, the E2E p50/p95/p99 and the schedule lag p99 — each not
// measurable when the run has no request to measure it on.
//
// The E2E quantiles follow the one failure rule: a failed request counts
// as +∞ (see Quantile).
func Metrics(s record.Summary) []result.Metric {
	const noneSent = "no request was sent"
	n, lag := s.Requests, int(s.ScheduleLag.Count)
	ms := []result.Metric{
		DefGoodput.Measure(s.Goodput, n, noneSent),
		DefThroughput.Measure(s.Throughput, n, noneSent),
		DefSLOAttainment.Measure(s.SLOAttainment, n, noneSent),
		DefSuccessRate.Measure(s.SuccessRate, n, noneSent),
	}
	return append(append(ms, E2ECountingFailures(s)...), DefLagP99.Measure(s.ScheduleLag.P99, lag, noneSent))
}

// E2ECountingFailures are the E2E p50, p95 and p99 of s over every
// request, a failed one counting +∞ (Quantile): summary.e2e_counting_failures
// in run.json, beside the successes' e2e.
func E2ECountingFailures(s record.Summary) []result.Metric {
	return []result.Metric{Quantile(DefE2EP50, 0.50, s.E2E, s.Requests), Quantile(DefE2EP95, 0.95, s.E2E, s.Requests),
		Quantile(DefE2EP99, 0.99, s.E2E, s.Requests)}
}

// GroupCountingFailures fills g's E2E and TTFT quantiles over every
// request of it, a failed one counting +∞ (record.Group).
func GroupCountingFailures(g *record.Group) {
	g.E2ECountingFailures = []result.Metric{Quantile(DefE2EP50, 0.50, g.E2E, g.Count), Quantile(DefE2EP95, 0.95, g.E2E, g.Count),
		Quantile(DefE2EP99, 0.99, g.E2E, g.Count)}
	if t, typed := g.Labels[LabelType]; (typed && !protocol.Streams(t)) || g.TTFT.Count == 0 {
		return // no first token to wait for, or none of its successes streamed
	}
	g.TTFTCountingFailures = []result.Metric{GroupTTFT(DefTTFTP50, 0.50, *g), GroupTTFT(DefTTFTP99, 0.99, *g)}
}

// GroupTTFT is the q-quantile TTFT of group g, failures +∞: every failed
// request of a type that streams waits for a first token forever; an
// embedding or a retrieval has none to wait for.
func GroupTTFT(d result.Def, q float64, g record.Group) result.Metric {
	return Quantile(d, q, g.TTFT, int(g.TTFT.Count)+streamFailures(g))
}

// streamFailures is how many of g's failures were of a type that
// streams: all or none for a group of one type, StreamErrors for a mixed
// one, and every failure for a mixed group written before StreamErrors
// (which may make its TTFT a bound, never a figure too low).
func streamFailures(g record.Group) int {
	switch t, typed := g.Labels[LabelType]; {
	case typed && protocol.Streams(t):
		return g.Errors
	case typed:
		return 0
	case g.StreamErrors != nil:
		return *g.StreamErrors
	}
	return g.Errors
}

// Quantile is the q-quantile (0.5, 0.9, 0.95, 0.99 or 0.999) of a
// latency over n requests of which lat summarises the successes, a
// failed one (n − lat.Count) counting as +∞, read off the successes'
// summary (ok: their own q-quantile). Failures sort last, so the
// nearest-rank quantile is the successes' order statistic of rank
// r = ⌈q·n⌉: ok itself when the successes' own rank ⌈q·done⌉ is r; else
// bracketed by ok and the first summary figure whose rank reaches r
// (their max at worst); +∞ — a bound [ok, ∞) — when r falls on the
// failures; never when every request failed. The successes' figure is
// never given as the quantile when it is not.
func Quantile(d result.Def, q float64, lat record.Latency, n int) result.Metric {
	done, ok := int(lat.Count), figure(lat, q)
	failed := n - done
	rank := func(q float64, n int) int { return int(math.Ceil(q*float64(n) - 1e-9)) }
	r := rank(q, n)
	switch {
	case n <= 0:
		return d.NotMeasurable("no request was sent")
	case done == 0:
		return d.Never(fmt.Sprintf("every request of %d failed: with a failure counting +∞ the quantile is +∞", n))
	case failed <= 0 || rank(q, done) == r:
		m := d.Measure(ok, n, "no request completed")
		if failed > 0 && m.Measured() {
			m = m.WithReason(fmt.Sprintf("%d of %d requests failed, counted +∞ (they do not reach this quantile's rank)", failed, n))
		}
		return m
	case r > done:
		return d.Within(ok, math.Inf(1), n, fmt.Sprintf("%d of %d requests failed, more than the quantile allows: with a failure counting +∞ it is +∞; %s is the successes' own", failed, n, result.FormatValue(ok, d.Unit)))
	}
	hi := lat.Max
	for _, c := range figures(lat) {
		if c.q > q && rank(c.q, done) >= r {
			hi = c.v
			break
		}
	}
	return d.Within(ok, max(ok, hi), n, fmt.Sprintf("%d of %d requests failed, counted +∞: between the successes' own %s and the next figure their summary holds", failed, n, result.FormatValue(ok, d.Unit)))
}

// figures are the quantiles a latency summary holds.
func figures(lat record.Latency) []struct{ q, v float64 } {
	return []struct{ q, v float64 }{{0.5, lat.P50}, {0.9, lat.P90}, {0.95, lat.P95}, {0.99, lat.P99}, {0.999, lat.P999}}
}

// figure is lat's own q-quantile (NaN: lat holds no such figure).
func figure(lat record.Latency, q float64) float64 {
	for _, c := range figures(lat) {
		if math.Abs(c.q-q) < 1e-9 {
			return c.v
		}
	}
	return math.NaN()
}
