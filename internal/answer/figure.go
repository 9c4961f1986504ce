package answer

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/workload"
)

// panelSet is what a recipe draws for one column: its panels (one per
// row of the figure), their legend, or why it cannot.
type panelSet struct {
	panels []*plot.Plot
	legend []chart.LegendEntry
	why    string // not measurable: the reason
	// horizontal: a lone column lays its panels side by side (several
	// columns always stack each column's panels).
	horizontal bool
	// note goes into the caption (what a narrow legend leaves out).
	note string
}

// recipe is a Q's answer figure.
type recipe struct {
	title   string
	caption string
	// build draws one column from the table keyed key.
	build func(c Column, key string, width vg.Length) (panelSet, error)
	// shareX: columns share the x range too (time axes).
	shareX bool
	// timeline: drawn from one run's windows, not from pooled metrics.
	timeline bool
	height   vg.Length // per row of panels; 0: the default
}

// recipes are the answer figures by workload.Figure recipe: a Q picks
// one, and the key of its table, in its workload.Spec.
var recipes = map[string]recipe{
	workload.FigureStages: q1Recipe, workload.FigurePolicies: q2Recipe, workload.FigureIsolation: q3Recipe,
	workload.FigureFrontier: q4Recipe, workload.FigureBursts: q6Recipe, workload.FigureTimeline: timelineRecipe,
}

// figureOf is the answer figure q registered in its workload.Spec.
func figureOf(q string) (workload.Figure, recipe, bool) {
	s, err := catalog.Lookup(q)
	if err != nil {
		return workload.Figure{}, recipe{}, false
	}
	rc, ok := recipes[s.Figure.Recipe]
	return s.Figure, rc, ok
}

// Figure draws q's answer for the columns side by side (one column of
// panels per run, shared axes per row) at width w (0: a report page).
// Columns that cannot be drawn are named in the caption; when none can,
// the figure is the message saying why. A metric whose unit is not its
// axis's is an error.
func Figure(q string, cols []Column, w vg.Length) (*chart.Figure, error) {
	q = strings.ToUpper(q)
	fig, rc, ok := figureOf(q)
	f := &chart.Figure{ID: "answer", Width: w}
	if !ok {
		f.Title, f.Message = "Answer", fmt.Sprintf("%s has no answer figure", q)
		return f, nil
	}
	if w == 0 {
		w = chart.PageWidth
	}
	f.Title, f.Caption, f.RowHeight = rc.title, rc.caption, rc.height
	sets := make([]panelSet, len(cols))
	rows := 0
	for i, c := range cols {
		s, err := rc.build(c, fig.Table, w/vg.Length(max(len(cols), 1)))
		if err != nil {
			return nil, fmt.Errorf("%s answer figure of %s: %w", q, c.Label, err)
		}
		sets[i] = s
		rows = max(rows, len(s.panels))
	}
	var missing []string
	for i, s := range sets {
		if s.why != "" {
			missing = append(missing, fmt.Sprintf("%s: not measurable (%s)", label(cols, i), s.why))
		}
	}
	if rows == 0 {
		f.Message = "Not measurable: " + strings.Join(missing, "; ")
		return f, nil
	}
	layout(f, cols, sets, rows, rc.shareX, w < chart.PageWidth && len(cols) > 1)
	if len(missing) > 0 {
		f.Caption += " " + strings.Join(missing, "; ") + "."
	}
	for i, s := range sets {
		if s.note != "" && len(cols) > 1 {
			f.Caption += " " + label(cols, i) + ": " + s.note
		} else if s.note != "" {
			f.Caption += " " + s.note
		}
	}
	return f, nil
}

// layout puts each column's panels in a column of the grid (stacked: in
// a row of the grid, for a narrow figure), shares the axes of each kind
// of panel and merges the legends.
func layout(f *chart.Figure, cols []Column, sets []panelSet, rows int, shareX, stacked bool) {
	f.Cols = len(sets)
	if len(sets) == 1 && sets[0].horizontal {
		f.Cols, f.Panels, f.Legend = len(sets[0].panels), sets[0].panels, dedupe(sets[0].legend)
		f.RowHeight = 0
		return
	}
	at := func(r, j int) int { return r*len(sets) + j }
	if stacked {
		f.Cols = rows
		at = func(r, j int) int { return j*rows + r }
	} else {
		f.Runs = len(sets) // too many to fit side by side: small multiples
	}
	f.Panels = make([]*plot.Plot, rows*len(sets))
	seen := map[string]bool{}
	for j, s := range sets {
		for r, p := range s.panels {
			if p != nil && len(sets) > 1 {
				p.Title.Text = strings.TrimSpace(label(cols, j) + ": " + p.Title.Text)
			}
			f.Panels[at(r, j)] = p
		}
		for _, e := range s.legend {
			if !seen[e.Label] {
				seen[e.Label] = true
				f.Legend = append(f.Legend, e)
			}
		}
	}
	for r := range rows {
		kind := make([]*plot.Plot, len(sets))
		for j := range sets {
			kind[j] = f.Panels[at(r, j)]
		}
		chart.Share(kind, shareX, true)
	}
}

// dedupe keeps the first legend entry of each label.
func dedupe(entries []chart.LegendEntry) []chart.LegendEntry {
	seen := map[string]bool{}
	var out []chart.LegendEntry
	for _, e := range entries {
		if !seen[e.Label] {
			seen[e.Label] = true
			out = append(out, e)
		}
	}
	return out
}

func label(cols []Column, i int) string {
	if cols[i].Label != "" {
		return cols[i].Label
	}
	return "run " + itoa(i+1)
}

// Timeline reports whether q's answer figure is a drill timeline (drawn
// from one run's windows, not from pooled metrics).
func Timeline(q string) bool {
	_, rc, _ := figureOf(q)
	return rc.timeline
}
