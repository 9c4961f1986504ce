package presenter

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// writeFloor renders the measurement floor in summary.md and marks the
// differences between phases that lie within it.
func writeFloor(w io.Writer, r Run) {
	run := r.Record
	f := run.MeasurementFloor
	if f == nil {
		return
	}
	fmt.Fprintf(w, "\n## Measurement floor\n\n%s; load average %.1f.\n\n", f.Source, f.LoadAvg1)
	fmt.Fprintf(w, "| harness error (measured − true) | n | failed | median ms | median %% | p99 ms | max ms |\n|---|---|---|---|---|---|---|\n")
	for _, row := range FloorRows(f, "exact server's own lateness (TTFT)") {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if f.Failed > 0 {
		fmt.Fprintf(w, "\nA request that failed against the exact server counts +∞ in the TTFT and E2E quantiles (%d failed).\n", f.Failed)
	}
	fmt.Fprintf(w, "\nDelivered rate %.2f of %.2f req/s (%+.2f %%). Goal (%s): %s.\n", f.DeliveredRate, f.TargetRate, f.RateErrorPct, f.Goal, metNot(f.GoalMet))
	for _, n := range f.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	for _, n := range withinFloor(r, f) {
		fmt.Fprintf(w, "- %s\n", n)
	}
}

// FloorRows are the rows of the floor's error table: name, n, failed,
// median ms, median %, p99 ms, max ms, for TTFT, ITL, E2E and the
// server's own lateness (named late). The TTFT and E2E quantiles count
// a request that failed against the exact server as +∞ (it has no error
// to show; floorTail): "+∞" when the failures reach the rank, a bracket
// when they move it, and the median % only when the median is exact.
func FloorRows(f *record.Floor, late string) [][]string {
	var out [][]string
	for _, row := range []struct {
		name   string
		s      record.ErrorStats
		failed int
	}{{"TTFT", f.TTFT, f.Failed}, {"ITL", f.ITL, 0}, {"E2E", f.E2E, f.Failed}, {late, f.ServerLate, 0}} {
		if row.s.Count == 0 && row.failed == 0 {
			continue
		}
		med, exact := floorTail(row.s.Median, row.s.Max, 0.5, row.s.Count, row.failed)
		pct := fmt.Sprintf("%.2f", row.s.MedianPct)
		if !exact {
			pct = "-" // the successes' median is not the median
		}
		out = append(out, []string{row.name, fmt.Sprint(row.s.Count), fmt.Sprint(row.failed), med, pct,
			floorP99(row.s, row.failed), fmt.Sprintf("%.3f", row.s.Max)})
	}
	return out
}

// withinFloor names the p99 differences between a phase and the first
// phase, per request type, that are no larger than the floor's p99 error:
// the harness cannot tell them from its own error.
func withinFloor(r Run, f *record.Floor) []string {
	if _, ok := FloorP99(f); !ok {
		return nil // failures move the floor's p99: it is not known
	}
	groups := r.configGroups()
	first := map[string]record.Group{}
	var out []string
	for _, g := range groups {
		typ, phase := g.Labels[summary.LabelType], g.Labels[summary.LabelPhase]
		base, seen := first[typ]
		if !seen {
			first[typ] = g
			continue
		}
		for _, m := range []struct {
			name  string
			a, b  result.Metric // failures +∞: only exact figures compare
			floor float64
		}{{"p99 TTFT", groupTTFT(0.99, base), groupTTFT(0.99, g), f.TTFT.P99}, {"p99 E2E", tail(0.99, base.E2E, base.Count), tail(0.99, g.E2E, g.Count), f.E2E.P99}} {
			a, aok := tailValue(m.a)
			b, bok := tailValue(m.b)
			if d := math.Abs(b - a); aok && bok && a > 0 && b > 0 && d <= math.Abs(m.floor) {
				out = append(out, fmt.Sprintf("%s %s: %s differs from %s by %.3f ms, within the floor (%.3f ms)",
					typ, m.name, phase, base.Labels[summary.LabelPhase], d, m.floor))
			}
		}
	}
	return out
}
