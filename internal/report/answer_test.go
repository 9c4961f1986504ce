package report

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/result"
)

// answerFigureProblems are the ways q's answer figure of cols fails its
// contract: an error (a metric drawn on an axis of another unit), no
// panel (a message instead), a panel whose y axis names no unit, or a
// panel that draws no data.
func answerFigureProblems(q string, cols []answer.Column) []string {
	f, err := answer.Figure(q, cols, 0)
	if err != nil {
		return []string{err.Error()}
	}
	if len(f.Panels) == 0 {
		return []string{"no panel: " + f.Message}
	}
	var out []string
	for i, p := range f.Panels {
		if p == nil {
			continue
		}
		if p.Y.Label.Text == "" {
			out = append(out, "panel "+p.Title.Text+": its y axis names no unit")
		}
		if chart.DataInk(p, 300, 200) == 0 {
			out = append(out, "panel "+p.Title.Text+" draws no data")
		}
		_ = i
	}
	if strings.Contains(f.Caption, "not measurable") {
		out = append(out, "caption: "+f.Caption)
	}
	return out
}

// TestEveryAnswerFigureDrawsItsMetrics renders every Q's answer figure
// from its quick fixture: each panel draws data on an axis in the unit
// of the metrics drawn (answer refuses any other), and the figure finds
// its table by the key the Q registered in its workload.Spec.
func TestEveryAnswerFigureDrawsItsMetrics(t *testing.T) {
	for _, s := range catalog.Catalog() {
		t.Run(s.ID, func(t *testing.T) {
			if s.Figure.Recipe == "" {
				t.Fatalf("%s registers no answer figure in its Spec", s.ID)
			}
			r := Load(quickRuns(t, strings.ToLower(s.ID))[0])
			for _, p := range answerFigureProblems(s.ID, []answer.Column{r.Column("")}) {
				t.Error(p)
			}
		})
	}
}

// TestAnswerFigureFailsOnARenamedKey: a table key renamed on one side
// only (the record's, as a Q renaming its constant without the figure
// would write) blanks the figure with its reason, and the contract test
// says so, instead of another table being drawn.
func TestAnswerFigureFailsOnARenamedKey(t *testing.T) {
	for _, s := range catalog.Catalog() {
		if s.Figure.Table == "" {
			continue
		}
		t.Run(s.ID, func(t *testing.T) {
			r := Load(quickRuns(t, strings.ToLower(s.ID))[0])
			res := *r.Record.Result
			res.Tables = append([]result.Table(nil), res.Tables...)
			renamed := false
			for i := range res.Tables {
				if res.Tables[i].Key == "" {
					res.Tables[i].Key = "legacy-" + res.Tables[i].Title // a record from before keys gets keys
				}
				if res.Tables[i].Key == s.Figure.Table {
					res.Tables[i].Key += "_renamed"
					renamed = true
				}
			}
			if !renamed {
				t.Logf("the fixture predates keys: every table keyed, none %q", s.Figure.Table)
			}
			c := r.Column("")
			c.Result = &res
			if got := answerFigureProblems(s.ID, []answer.Column{c}); len(got) == 0 {
				t.Errorf("the figure still drew with table %q renamed", s.Figure.Table)
			}
		})
	}
}
