package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// page is what the HTML template sees.
type page struct {
	Title, Generated string
	// Overview is one row per run of a multi-run report, in the order
	// of the sections (the order the runs were given): the page opens
	// with it.
	Overview []overviewRow
	Sections []pageSection
}

// overviewRow is one run in the overview: its Q, its section's anchor,
// its answer sentence, validity and target verdict.
type overviewRow struct {
	Heading, Anchor, Label, RunID, Answer string
	Valid                                 bool
	Targets                               string // "met (2)", "1 of 2 MISSED", "–" without targets
}

type pageSection struct {
	ID, Heading string
	Mixed       string // banner: the report holds other Qs or scales
	Single      bool
	Runs        []pageRun
	Answer      *pageFigure
	Figures     []pageFigure
	Scraped     []pageFigure
	Compare     *pageCompare
}

type pageRun struct {
	Label, RunID, Dir, Backend string
	Seed, Repetition           int64
	Answer                     string
	Valid                      bool
	Reasons, Targets, Notes    []string
	TargetVerdict              string // the overview's: "met (n)", "k of n MISSED", "–"
	Tables                     []pageTable
	Summary, Metrics, Raw      [][2]string
	Config, Environment        string
}

type pageTable struct {
	Title, Note string
	Columns     []string
	Rows        [][]pageCell
}

type pageCell struct{ Text, Hint string }

type pageFigure struct {
	ID, Title, Caption string
	SVG                template.HTML
}

type pageCompare struct {
	Sides []Side
	Rows  []CompareRow
	Diffs []string
	Note  string
}

// WriteHTML writes the report as one self-contained page: inline CSS and
// inline SVG, no script, and a Content-Security-Policy that forbids any
// request from the page.
func (rep *Report) WriteHTML(w io.Writer) error {
	pg := page{Title: rep.Title, Generated: rep.Generated.Format("2006-01-02 15:04:05Z")}
	for _, s := range rep.Sections {
		ps, err := sectionPage(s, rep)
		if err != nil {
			return err
		}
		pg.Sections = append(pg.Sections, ps)
	}
	if len(rep.Runs) > 1 {
		pg.Overview = overview(pg.Sections)
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, pg); err != nil {
		return fmt.Errorf("rendering report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func sectionPage(s *Section, rep *Report) (pageSection, error) {
	ps := pageSection{ID: s.ID, Heading: s.Heading(), Single: len(s.Runs) == 1}
	if len(rep.Sections) > 1 {
		var others []string
		for _, o := range rep.Sections {
			others = append(others, o.Heading())
		}
		ps.Mixed = fmt.Sprintf("This report holds runs of different Qs or scales (%s): each section compares only its own runs; numbers across sections are not comparable.", joinAnd(others))
	}
	for i, r := range s.Runs {
		ps.Runs = append(ps.Runs, runPage(r, s.Label(i)))
	}
	figs, err := pageFigures(s.Figures)
	if err != nil {
		return ps, err
	}
	if len(figs) > 0 {
		ps.Answer, ps.Figures = &figs[0], figs[1:]
	}
	if ps.Scraped, err = pageFigures(s.Scraped); err != nil {
		return ps, err
	}
	if c := s.Compare; c != nil {
		ps.Compare = &pageCompare{Sides: c.Sides, Rows: c.Rows, Diffs: c.Diffs, Note: c.Note}
	}
	return ps, nil
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return fmt.Sprint(strings.Join(xs[:len(xs)-1], ", "), " and ", xs[len(xs)-1])
}

func runPage(r *Run, label string) pageRun {
	rec := r.Record
	pr := pageRun{Label: label, RunID: r.Label(), Dir: r.Dir, Backend: rec.Backend, Seed: rec.Seed, Repetition: int64(rec.Repetition),
		Valid: r.Valid(), Notes: rec.Notes, Summary: summaryRows(r), Raw: rawRows(rec.Summary.TargetMetrics),
		Config: prettyJSON(rec.RunConfig), Environment: prettyJSON(mustJSON(rec.Environment))}
	pr.Reasons = reasons(r)
	if res := rec.Result; res != nil {
		pr.Answer = res.Answer
		for _, v := range res.Targets {
			pr.Targets = append(pr.Targets, metMissed(v.Met)+": "+v.Reason)
		}
		pr.TargetVerdict = targetVerdict(res.Targets)
		for _, m := range res.Metrics {
			pr.Metrics = append(pr.Metrics, [2]string{m.Name, result.Format(m)})
		}
		pr.Tables = resultTables(*res)
	} else {
		pr.Answer = "not answered: the run has no result (it did not finish, or run.json is unreadable)"
	}
	return pr
}

func reasons(r *Run) []string {
	rec := r.Record
	var out []string
	if !rec.Complete {
		out = append(out, "the run did not complete")
	}
	if !rec.Valid && len(rec.InvalidReasons) == 0 {
		out = append(out, "marked invalid without a reason")
	}
	out = append(out, rec.InvalidReasons...)
	return append(out, r.Problems...)
}

// resultTables are the result's tables, then its events (a drill's
// per-event outcome and recovery).
func resultTables(res result.Result) []pageTable {
	var out []pageTable
	for _, t := range res.Tables {
		pt := pageTable{Title: t.Title, Note: t.Note, Columns: t.Columns}
		for _, row := range t.Rows {
			var cells []pageCell
			for _, c := range row {
				cells = append(cells, cellOf(c))
			}
			pt.Rows = append(pt.Rows, cells)
		}
		out = append(out, pt)
	}
	if len(res.Events) > 0 {
		out = append(out, eventsTable(res.Events))
	}
	return out
}

func cellOf(c result.Cell) pageCell {
	if c.Metric == nil {
		return pageCell{Text: c.Text}
	}
	return pageCell{Text: result.Short(*c.Metric), Hint: result.Format(*c.Metric)}
}

func eventsTable(events []result.Event) pageTable {
	t := pageTable{Title: "Events", Note: "each drill event, when it was performed and what followed it",
		Columns: []string{"#", "action", "target", "at", "outcome", "metrics"}}
	for _, e := range events {
		at := "not performed"
		if e.AtS != nil {
			at = result.FormatValue(*e.AtS, result.Seconds)
		}
		ms := ""
		for i, m := range e.Metrics {
			if i > 0 {
				ms += "; "
			}
			ms += m.Name + " " + result.Format(m)
		}
		t.Rows = append(t.Rows, []pageCell{{Text: fmt.Sprint(e.Seq + 1)}, {Text: e.Action}, {Text: e.Target}, {Text: at}, {Text: e.Outcome}, {Text: ms}})
	}
	return t
}

func pageFigures(figs []*Figure) ([]pageFigure, error) {
	out := make([]pageFigure, 0, len(figs))
	for _, f := range figs {
		svg, err := f.InlineSVG()
		if err != nil {
			return nil, err
		}
		// The SVG is drawn by gonum/plot, which escapes every text it writes.
		out = append(out, pageFigure{ID: f.ID, Title: f.Title, Caption: f.Caption, SVG: template.HTML(svg)})
	}
	return out, nil
}

// summaryRows are the run's key facts, formatted for a reader.
func summaryRows(r *Run) [][2]string {
	rec := r.Record
	s := rec.Summary
	v := func(x float64, unit string) string { return result.FormatValue(x, unit) }
	rows := [][2]string{
		{"requests (ok / failed)", fmt.Sprintf("%s (%s / %s)", v(float64(s.Requests), result.Count), v(float64(s.Succeeded), result.Count), v(float64(s.Failed), result.Count))},
		{"duration", v(s.DurationSeconds, result.Seconds)},
		{"target / delivered rate", v(s.TargetRate, result.ReqPerS) + " / " + v(s.DeliveredRate, result.ReqPerS)},
		{"throughput / goodput", v(s.Throughput, result.ReqPerS) + " / " + v(s.Goodput, result.ReqPerS)},
		{"SLO attainment / success rate", v(s.SLOAttainment, result.Fraction) + " / " + v(s.SuccessRate, result.Fraction)},
		{"E2E p50 / p99 / max (a failed request counts +∞)", e2eText(s)},
	}
	if s.Requests > int(s.E2E.Count) && s.E2E.Count > 0 {
		rows = append(rows, [2]string{"E2E p50 / p99 / max, successes only", v(s.E2E.P50, result.Ms) + " / " + v(s.E2E.P99, result.Ms) + " / " + v(s.E2E.Max, result.Ms)})
	}
	return append(rows, [][2]string{
		{"schedule lag p99", v(s.ScheduleLag.P99, result.Ms)},
		{"backend / seed / repetition", fmt.Sprintf("%s / %d / %d", rec.Backend, rec.Seed, rec.Repetition)},
		{"load mode / target", rec.LoadMode + " / " + rec.Target},
		{"config hash", rec.ConfigHash},
		{"started / load average", rec.StartedAt.UTC().Format("2006-01-02 15:04:05Z") + " / " + result.Number(rec.Environment.LoadAvg1) + " on " + fmt.Sprint(rec.Environment.Cores) + " cores"},
	}...)
}

// e2eText is the run's E2E p50 / p99 / max over every request, a failed
// one counting +∞ (summary.Quantile): "+∞" where failures reach the
// rank, a bracket where they move it among the successes, never the
// successes' figure in their stead.
func e2eText(s record.Summary) string {
	q := func(p float64) string {
		m := summary.Quantile(result.Def{Name: "e2e", Unit: result.Ms, Direction: result.Lower}, p, s.E2E, s.Requests)
		switch {
		case m.State == result.Never, m.State == result.Bound && math.IsInf(m.Interval[1], 1):
			return "+∞"
		case m.State == result.NotMeasurable:
			return "–"
		}
		return result.Short(m)
	}
	mx := "+∞"
	switch {
	case s.Requests == 0:
		mx = "–"
	case s.Requests == int(s.E2E.Count):
		mx = result.FormatValue(s.E2E.Max, result.Ms)
	}
	return q(0.5) + " / " + q(0.99) + " / " + mx
}

// rawRows are the scraped target metrics, by key.
func rawRows(m map[string]float64) [][2]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		out[i] = [2]string{k, result.Number(m[k])}
	}
	return out
}

func metMissed(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

func prettyJSON(raw []byte) string {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// overview lists every run of the sections, section by section.
func overview(sections []pageSection) []overviewRow {
	var out []overviewRow
	for _, s := range sections {
		anchor := "section-1"
		if s.ID != "" {
			anchor = "section-" + s.ID
		}
		for _, r := range s.Runs {
			out = append(out, overviewRow{Heading: s.Heading, Anchor: anchor, Label: r.Label, RunID: r.RunID, Answer: r.Answer,
				Valid: r.Valid, Targets: r.TargetVerdict})
		}
	}
	return out
}

// targetVerdict sums up a run's target verdicts for the overview.
func targetVerdict(vs []result.Verdict) string {
	if len(vs) == 0 {
		return "–"
	}
	missed := 0
	for _, v := range vs {
		if !v.Met {
			missed++
		}
	}
	if missed == 0 {
		return fmt.Sprintf("met (%d)", len(vs))
	}
	return fmt.Sprintf("%d of %d MISSED", missed, len(vs))
}
