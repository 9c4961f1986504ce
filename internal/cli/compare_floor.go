package cli

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/stats"
)

// floorOf is the largest measurement floor (p99 E2E error, ms) among the
// calibrated runs of sets, and how many runs carried one.
func floorOf(sets []*benchset.Set) (ms float64, n int) {
	for _, s := range sets {
		for _, r := range s.Runs {
			if r.Floor != nil {
				ms, n = math.Max(ms, math.Max(r.Floor.E2E.P99, r.Floor.TTFT.P99)), n+1
			}
		}
	}
	return ms, n
}

// writeWithinFloor names the rows of millisecond tables whose median moved
// by no more than the runs' measurement floor: the harness cannot tell
// such a change from its own error, significant or not.
func writeWithinFloor(w io.Writer, rep *stats.Report, sets []*benchset.Set) {
	floor, n := floorOf(sets)
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
