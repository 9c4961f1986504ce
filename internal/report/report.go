package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Config says what to report.
type Config struct {
	Dirs  []string // run directories, or results roots holding them
	Title string   // "" : a title from the runs
	Now   func() time.Time
}

// Validate checks the config and applies defaults.
func (c *Config) Validate() error {
	if len(c.Dirs) == 0 {
		return errors.New("no run directory given")
	}
	for _, d := range c.Dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			return fmt.Errorf("%s is not a directory (want a run directory OUT/<q>/<run-id>/ holding run.json, or a results root)", d)
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Report is the loaded runs, grouped into sections, and their figures.
type Report struct {
	Title     string
	Generated time.Time
	Runs      []*Run
	// Sections group the runs of one Q at one scale: compared side by
	// side within a section, never across.
	Sections []*Section
	Skipped  []string // directories that are not runs (aggregates of repetitions)
}

// aggregateFile marks the directory `run --repeat` writes with the
// statistics over repetitions: not a run, so not drawn.
const aggregateFile = "aggregate.json"

// isAggregateDir reports a directory holding aggregate.json and no run.json.
func isAggregateDir(dir string) bool {
	_, errRun := os.Stat(filepath.Join(dir, "run.json"))
	_, errAgg := os.Stat(filepath.Join(dir, aggregateFile))
	return errRun != nil && errAgg == nil
}

// Build finds the run directories, loads them and draws the figures.
// Damaged runs are loaded with their problems, never refused.
func Build(cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dirs, aggs, err := Discover(cfg.Dirs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Title: cfg.Title, Generated: cfg.Now().UTC(), Skipped: aggs}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w among %d given (only aggregates of repetitions)", ErrNoRuns, len(cfg.Dirs))
	}
	for _, d := range dirs {
		rep.Runs = append(rep.Runs, Load(d))
	}
	rep.Sections = sections(rep.Runs)
	for i, s := range rep.Sections {
		if len(rep.Sections) > 1 {
			s.ID = fmt.Sprintf("s%d", i+1)
		}
		if err := s.draw(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Heading(), err)
		}
	}
	if rep.Title == "" {
		rep.Title = defaultTitle(rep)
	}
	return rep, nil
}

func defaultTitle(rep *Report) string {
	if len(rep.Runs) == 1 {
		r := rep.Runs[0].Record
		return fmt.Sprintf("sagebench %s %s — %s", r.Workload, r.Name, rep.Runs[0].Label())
	}
	if len(rep.Sections) == 1 {
		return fmt.Sprintf("sagebench %s: %d runs side by side", rep.Sections[0].Heading(), len(rep.Runs))
	}
	return fmt.Sprintf("sagebench: %d runs in %d sections", len(rep.Runs), len(rep.Sections))
}

// AllFigures lists every figure of the report in page order.
func (rep *Report) AllFigures() []*Figure {
	var out []*Figure
	for _, s := range rep.Sections {
		out = append(out, s.Figures...)
		out = append(out, s.Scraped...)
	}
	return out
}

// WriteFigures writes each figure as DIR/ID.format (svg, pdf or png),
// creating DIR, and returns the paths written.
func (rep *Report) WriteFigures(dir, format string) ([]string, error) {
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("figure format %q: want svg, pdf or png", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	var paths []string
	for _, f := range rep.AllFigures() {
		b, err := f.Render(format)
		if err != nil {
			return paths, err
		}
		p := filepath.Join(dir, safeName(f.ID)+"."+format)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return paths, fmt.Errorf("writing %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
