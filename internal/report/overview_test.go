package report

import (
	"html/template"
	"strings"
	"testing"
)

// TestOverviewFirstSectionsInTheOrderGiven: a report of Q5, Q2 and Q3
// runs, given in that order, opens with one overview table — each run
// with its Q linking to its section, its answer, validity and targets —
// and its sections follow in the order the runs were given.
func TestOverviewFirstSectionsInTheOrderGiven(t *testing.T) {
	q5, q2, q3 := quickRuns(t, "q5")[0], quickRuns(t, "q2")[0], quickRuns(t, "q3")[0]
	rep := build(t, q5, q2, q3)
	html := buildHTML(t, q5, q2, q3)
	var order []string
	for _, s := range rep.Sections {
		order = append(order, s.Workload)
	}
	if strings.Join(order, " ") != "Q5 Q2 Q3" {
		t.Fatalf("sections %v, want Q5 Q2 Q3 as given", order)
	}
	iOverview, iFirst := strings.Index(html, `<h2 id="overview">`), strings.Index(html, `<section class="q"`)
	if iOverview < 0 || iOverview > iFirst {
		t.Fatalf("overview at %d, first section at %d: want the overview first", iOverview, iFirst)
	}
	table := html[iOverview:iFirst]
	last := -1
	for i, r := range rep.Runs {
		s := rep.Sections[i]
		row := `<a href="#section-` + s.ID + `">` + template.HTMLEscapeString(s.Heading()) + `</a>`
		at := strings.Index(table, row)
		if at < 0 || at < last {
			t.Errorf("overview lacks %s (or out of order) in\n%s", row, table)
		}
		last = at
		if !strings.Contains(table, template.HTMLEscapeString(r.Record.Result.Answer)[:20]) {
			t.Errorf("overview lacks the answer of %s", r.Record.RunID)
		}
		if !strings.Contains(html, `id="section-`+s.ID+`"`) {
			t.Errorf("the link target section-%s is not on the page", s.ID)
		}
	}
	if strings.Count(table, "<tr>") != 1+len(rep.Runs) {
		t.Errorf("overview has %d rows, want a header and %d runs", strings.Count(table, "<tr>"), len(rep.Runs))
	}
	if one := buildHTML(t, q2); strings.Contains(one, `id="overview"`) {
		t.Error("a one-run report has an overview: it opens with its answer")
	}
}
