package presenter

import (
	"fmt"
	"io"
	"math"

	"github.com/sagebench/sagebench/internal/record"
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
	fmt.Fprintf(w, "| harness error (measured − true) | n | median ms | median %% | p99 ms | max ms |\n|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		s    record.ErrorStats
	}{{"TTFT", f.TTFT}, {"ITL", f.ITL}, {"E2E", f.E2E}, {"exact server's own lateness (TTFT)", f.ServerLate}} {
		if row.s.Count > 0 {
			fmt.Fprintf(w, "| %s | %d | %.3f | %.2f | %.3f | %.3f |\n", row.name, row.s.Count, row.s.Median, row.s.MedianPct, row.s.P99, row.s.Max)
		}
	}
	fmt.Fprintf(w, "\nDelivered rate %.2f of %.2f req/s (%+.2f %%). Goal (%s): %s.\n", f.DeliveredRate, f.TargetRate, f.RateErrorPct, f.Goal, metNot(f.GoalMet))
	for _, n := range f.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	for _, n := range withinFloor(r, f) {
		fmt.Fprintf(w, "- %s\n", n)
	}
}

// withinFloor names the p99 differences between a phase and the first
// phase, per request type, that are no larger than the floor's p99 error:
// the harness cannot tell them from its own error.
func withinFloor(r Run, f *record.Floor) []string {
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
			name        string
			a, b, floor float64
		}{{"p99 TTFT", base.TTFT.P99, g.TTFT.P99, f.TTFT.P99}, {"p99 E2E", base.E2E.P99, g.E2E.P99, f.E2E.P99}} {
			if d := math.Abs(m.b - m.a); m.a > 0 && m.b > 0 && d <= math.Abs(m.floor) {
				out = append(out, fmt.Sprintf("%s %s: %s differs from %s by %.3f ms, within the floor (%.3f ms)",
					typ, m.name, phase, base.Labels[summary.LabelPhase], d, m.floor))
			}
		}
	}
	return out
}
