package report

import (
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/chart"
)

// Figure is one figure of the report.
type Figure = chart.Figure

// Formats of figure files (chart's).
var Formats = chart.Formats

// Section is the runs of one Q at one scale: drawn side by side (one
// column of panels per run, shared axes), compared only with each other.
type Section struct {
	ID       string // prefix of the section's figure ids ("" when it is the only one)
	Workload string // Q1..Q8 ("" when run.json is unreadable)
	Name     string
	Scale    string // quick | full
	Runs     []*Run
	// Figures: the Q's answer first, then latency CDFs, per-label CDFs
	// and the time series.
	Figures []*Figure
	// Scraped are the target metrics recorded during the runs (shown
	// last, folded away).
	Scraped []*Figure
	Compare *Comparison // across the runs' configurations (several runs)
}

// Heading is "Q2 ControlMix (quick)".
func (s *Section) Heading() string {
	if s.Workload == "" {
		return "runs without a readable run.json"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s (%s)", s.Workload, s.Name, s.Scale))
}

// Label names run i in legends and panel titles: its run id when the
// section has one run, else "run1", "run2", ….
func (s *Section) Label(i int) string {
	if len(s.Runs) == 1 {
		return s.Runs[0].Label()
	}
	return fmt.Sprintf("run%d", i+1)
}

// sections groups runs by Q and scale, in order of first appearance.
func sections(runs []*Run) []*Section {
	var out []*Section
	index := map[string]*Section{}
	for _, r := range runs {
		scale := answer.Scale(r.Record.RunConfig)
		key := r.Record.Workload + "/" + scale
		s, ok := index[key]
		if !ok {
			s = &Section{Workload: r.Record.Workload, Name: r.Record.Name, Scale: scale}
			index[key] = s
			out = append(out, s)
		}
		s.Runs = append(s.Runs, r)
	}
	return out
}

// draw builds the section's figures and its comparison.
func (s *Section) draw() error {
	cols := make([]answer.Column, len(s.Runs))
	for i, r := range s.Runs {
		cols[i] = r.Column(s.Label(i))
	}
	ans, err := answer.Figure(s.Workload, cols, 0)
	if err != nil {
		return err
	}
	figs := []*Figure{ans}
	more, err := s.runFigures()
	if err != nil {
		return err
	}
	figs = append(figs, more...)
	for _, f := range figs {
		f.ID = s.prefix() + f.ID
	}
	s.Figures = figs
	if s.Scraped, err = s.scrapedFigures(); err != nil {
		return err
	}
	if len(s.Runs) > 1 {
		s.Compare = compareRuns(s.Runs, s.Label)
	}
	return nil
}

func (s *Section) prefix() string {
	if s.ID == "" {
		return ""
	}
	return s.ID + "-"
}
