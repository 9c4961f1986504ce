package cli

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/presenter"
	"github.com/sagebench/sagebench/internal/stats"
)

// floorOf is the largest measurement floor (p99 TTFT or E2E error, ms,
// presenter.FloorP99) among the calibrated runs of sets, how many runs
// carried one, and how many carried one that failures left unknown.
func floorOf(sets []*benchset.Set) (ms float64, n, unknown int) {
	for _, s := range sets {
		for _, r := range s.Runs {
			if r.Floor == nil {
				continue
			}
			f, ok := presenter.FloorP99(r.Floor)
			if !ok {
				unknown++
				continue
			}
			ms, n = math.Max(ms, f), n+1
		}
	}
	return ms, n, unknown
}

// writeWithinFloor names the rows of millisecond tables whose median moved
// by no more than the runs' measurement floor: the harness cannot tell
// such a change from its own error, significant or not.
func writeWithinFloor(w io.Writer, rep *stats.Report, sets []*benchset.Set) {
	floor, n, unknown := floorOf(sets)
	if unknown > 0 {
		fmt.Fprintf(w, "\nmeasurement floor: unknown: requests failed against the exact server in %d calibrated run(s) and count +∞ at its p99; no row is marked within it\n", unknown)
		return
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\nmeasurement floor: %.3f ms (largest p99 harness error of %d calibrated runs)\n", floor, n)
	for _, t := range rep.Tables {
		if !strings.HasSuffix(t.Unit, "-ms") {
			continue
		}
		for _, row := range t.Rows {
			for i, c := range row.Cells {
				if i == 0 || c == nil || !c.HasBase || row.Cells[0] == nil {
					continue
				}
				if d := math.Abs(c.Center - row.Cells[0].Center); d <= floor {
					fmt.Fprintf(w, "within floor: %s %s vs %s: %.3f ms\n", row.Name, t.Unit, t.Columns[i], d)
				}
			}
		}
	}
}
