package report

import (
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/sagebench/sagebench/internal/chart"
)

// runsOf is n Q2 quick runs for a side-by-side report: the three
// repetitions and the single run of the fixtures, again as needed.
func runsOf(t *testing.T, n int) []string {
	pool := append(quickRuns(t, "compare"), quickRuns(t, "q2")...)
	var out []string
	for i := range n {
		out = append(out, pool[i%len(pool)])
	}
	return out
}

// TestSideBySideScales: 2, 5 and 8 runs side by side lay out with no
// overlapping or clipped text, no panel without data (5 runs once
// blanked the ITL and E2E CDFs), and one legend entry per series (a
// run's counts are not repeated per run: each panel names its run);
// beyond three runs at the page width the runs wrap into small
// multiples.
func TestSideBySideScales(t *testing.T) {
	for _, n := range []int{2, 5, 8} {
		t.Run(fmt.Sprintf("%d runs", n), func(t *testing.T) {
			rep := build(t, runsOf(t, n)...)
			if len(rep.Sections) != 1 || len(rep.Sections[0].Runs) != n {
				t.Fatalf("%d sections: want one of %d runs", len(rep.Sections), n)
			}
			for _, f := range rep.AllFigures() {
				for _, p := range append(f.CheckText(0), f.BlankPanels(0)...) {
					t.Error(p)
				}
				for _, e := range f.Legend {
					if strings.Contains(e.Label, "(n=") {
						t.Errorf("figure %s: legend entry %q carries one run's count", f.ID, e.Label)
					}
				}
				if cols, _ := f.GridAt(0); f.Runs == n && vg.Length(cols)*chart.MinPanelWidth > chart.PageWidth {
					t.Errorf("figure %s: %d columns of panels at the page width: want small multiples", f.ID, cols)
				}
			}
		})
	}
}
