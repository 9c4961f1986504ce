package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/sagebench/sagebench/internal/result"
	"html/template"
	"io"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
)

// page is what the HTML template sees.
type page struct {
	Title       string
	Generated   string
	Runs        []pageRun
	Comparison  []pageFigure
	CompareText string
	Multi       bool
}

type pageRun struct {
	Label, Dir, Workload, Name, Backend string
	Valid                               bool
	Reasons                             []string
	Rows                                [][2]string
	Figures                             []pageFigure
	Config, Environment                 string
	Notes                               []string
}

type pageFigure struct {
	ID, Title, Caption string
	SVG                template.HTML
}

// WriteHTML writes the report as one self-contained page: inline CSS and
// inline SVG, no script, and a Content-Security-Policy that forbids any
// request from the page.
func (rep *Report) WriteHTML(w io.Writer) error {
	pg := page{Title: rep.Title, Generated: rep.Generated.Format("2006-01-02 15:04:05Z"),
		CompareText: rep.CompareText, Multi: len(rep.Runs) > 1}
	for i, r := range rep.Runs {
		pr, err := runPage(r, rep.RunFigures[i])
		if err != nil {
			return err
		}
		pg.Runs = append(pg.Runs, pr)
	}
	cmp, err := pageFigures(rep.Comparison)
	if err != nil {
		return err
	}
	pg.Comparison = cmp
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, pg); err != nil {
		return fmt.Errorf("rendering report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func runPage(r *Run, figs []*Figure) (pageRun, error) {
	rec := r.Record
	pr := pageRun{Label: r.Label(), Dir: r.Dir, Workload: rec.Workload, Name: rec.Name, Backend: rec.Backend,
		Valid: r.Valid(), Rows: summaryRows(rec), Notes: rec.Notes,
		Config: prettyJSON(rec.RunConfig), Environment: prettyJSON(mustJSON(rec.Environment))}
	if !rec.Complete {
		pr.Reasons = append(pr.Reasons, "the run did not complete")
	}
	if !rec.Valid && len(rec.InvalidReasons) == 0 {
		pr.Reasons = append(pr.Reasons, "marked invalid without a reason")
	}
	pr.Reasons = append(pr.Reasons, rec.InvalidReasons...)
	pr.Reasons = append(pr.Reasons, r.Problems...)
	f, err := pageFigures(figs)
	pr.Figures = f
	return pr, err
}

func pageFigures(figs []*Figure) ([]pageFigure, error) {
	out := make([]pageFigure, 0, len(figs))
	for _, f := range figs {
		svg, err := f.inlineSVG()
		if err != nil {
			return nil, err
		}
		// The SVG is drawn by gonum/plot, which escapes every text it writes.
		out = append(out, pageFigure{ID: f.ID, Title: f.Title, Caption: f.Caption, SVG: template.HTML(svg)})
	}
	return out, nil
}

func summaryRows(r *record.Run) [][2]string {
	s := r.Summary
	f := func(v float64, unit string) string { return strings.TrimSpace(fmt.Sprintf("%.4g %s", v, unit)) }
	var rows [][2]string
	if res := r.Result; res != nil {
		rows = append(rows, [2]string{"answer", res.Answer}, [2]string{"primary " + res.Primary.Name, result.Format(res.Primary)})
		for _, v := range res.Targets {
			rows = append(rows, [2]string{"target " + v.Metric, metMissed(v.Met) + ": " + v.Reason})
		}
	}
	rows = append(rows, [][2]string{
		{"requests (ok / failed)", fmt.Sprintf("%d (%d / %d)", s.Requests, s.Succeeded, s.Failed)},
		{"duration", f(s.DurationSeconds, "s")},
		{"target / delivered rate", fmt.Sprintf("%.4g / %.4g req/s", s.TargetRate, s.DeliveredRate)},
		{"throughput / goodput", fmt.Sprintf("%.4g / %.4g req/s", s.Throughput, s.Goodput)},
		{"SLO attainment / success rate", fmt.Sprintf("%.3f / %.3f", s.SLOAttainment, s.SuccessRate)},
		{"E2E p50 / p99 / max", fmt.Sprintf("%.4g / %.4g / %.4g ms", s.E2E.P50, s.E2E.P99, s.E2E.Max)},
		{"schedule lag p99", f(s.ScheduleLag.P99, "ms")},
		{"backend / seed / repetition", fmt.Sprintf("%s / %d / %d", r.Backend, r.Seed, r.Repetition)},
		{"config hash", r.ConfigHash},
		{"started", r.StartedAt.UTC().Format("2006-01-02 15:04:05Z")},
	}...)
	if res := r.Result; res != nil {
		for _, m := range res.Metrics {
			rows = append(rows, [2]string{m.Name, result.Format(m)})
		}
	}
	for _, k := range sortedKeys(s.TargetMetrics) {
		rows = append(rows, [2]string{k, fmt.Sprintf("%.4g", s.TargetMetrics[k])})
	}
	return rows
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
