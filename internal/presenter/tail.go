package presenter

import (
	"fmt"
	"math"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// The tables' latency quantiles follow the one failure rule: a failed
// request counts as +∞ (summary.Quantile), so a plain "p99" is never the
// successes' figure when failures moved it.

var defTail = result.Def{Name: "latency", Unit: result.Ms, Direction: result.Lower}

// tail is the q-quantile of a latency over n requests of which lat
// summarises the successes, failures +∞ (summary.Quantile).
func tail(q float64, lat record.Latency, n int) result.Metric {
	return summary.Quantile(defTail, q, lat, n)
}

// tailCell is t for a table of ms: "12.3"; "12.3–15.0" when failures
// moved the rank between two figures the summary holds; "+∞" when they
// reach it (or every request failed); "-" when nothing was sent.
func tailCell(t result.Metric) string {
	switch t.State {
	case result.Measured:
		return fmt.Sprintf("%.1f", t.Value)
	case result.Never:
		return "+∞"
	case result.Bound:
		if math.IsInf(t.Interval[1], 1) {
			return "+∞"
		}
		return fmt.Sprintf("%.1f–%.1f", t.Interval[0], t.Interval[1])
	}
	return "-"
}

// tailValue is t's value when it is measured exactly (ok false: a
// bound, +∞ or nothing).
func tailValue(t result.Metric) (float64, bool) {
	return t.Value, t.State == result.Measured
}

// groupTTFT is the q-quantile TTFT of group g, failures +∞
// (summary.GroupTTFT).
func groupTTFT(q float64, g record.Group) result.Metric {
	return summary.GroupTTFT(defTail, q, g)
}

// floorTail is a harness-error quantile of the floor (v, the successes'
// figure; mx their largest) counting the failed requests +∞: the figure
// when they leave its rank where it was (exact), "v–mx" when they move
// it among the successes, "+∞" when they reach it.
func floorTail(v, mx float64, q float64, count, failed int) (text string, exact bool) {
	n := count + failed
	r := quantile.Rank(n, q)
	switch {
	case n == 0:
		return "-", false
	case failed == 0 || r == quantile.Rank(count, q):
		return fmt.Sprintf("%.3f", v), true
	case r > count:
		return "+∞", false
	}
	return fmt.Sprintf("%.3f–%.3f", v, mx), false
}

// FloorP99 is the floor's p99 harness error in ms for the rule "a
// difference no larger cannot be told from the harness's own error": the
// larger of the TTFT and E2E p99s counting a failed request +∞ (floorTail),
// ok only when both are exact — a floor whose failures move or reach the
// rank is unknown, and the successes' figure is not it.
func FloorP99(f *record.Floor) (ms float64, ok bool) {
	for _, s := range []record.ErrorStats{f.TTFT, f.E2E} {
		if s.Count == 0 && f.Failed == 0 {
			continue
		}
		if _, exact := floorTail(s.P99, s.Max, 0.99, s.Count, f.Failed); !exact {
			return 0, false
		}
		ms = math.Max(ms, math.Abs(s.P99))
	}
	return ms, true
}

// floorP99 is floorTail's text of a p99.
func floorP99(s record.ErrorStats, failed int) string {
	t, _ := floorTail(s.P99, s.Max, 0.99, s.Count, failed)
	return t
}
