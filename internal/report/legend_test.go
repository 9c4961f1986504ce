package report

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/chart"
)

// TestColumnFigureLegendsStaySmall: at a paper's column width every Q's
// answer figure keeps its legend under a quarter of its height (the Q8
// drill timeline once spent ~45 % on it).
func TestColumnFigureLegendsStaySmall(t *testing.T) {
	for _, s := range catalog.Catalog() {
		r := Load(quickRuns(t, strings.ToLower(s.ID))[0])
		f, err := answer.Figure(s.ID, []answer.Column{r.Column("")}, chart.ColumnWidth)
		if err != nil {
			t.Fatal(err)
		}
		_, h := f.Size(chart.ColumnWidth)
		if share := float64(f.LegendHeight(chart.ColumnWidth) / h); share >= 0.25 {
			t.Errorf("%s: the legend takes %.0f %% of the column figure's height, want < 25 %%", s.ID, 100*share)
		}
	}
}
