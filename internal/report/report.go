package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/stats"
)

// Config says what to report.
type Config struct {
	Dirs  []string // run directories
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
			return fmt.Errorf("%s is not a run directory (want OUT/<q>/<run-id>/ holding run.json)", d)
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Report is the loaded runs and their figures.
type Report struct {
	Title       string
	Generated   time.Time
	Runs        []*Run
	RunFigures  [][]*Figure // per run
	Comparison  []*Figure   // across runs (two or more)
	CompareText string      // compare's statistics across runs, or why there are none
}

// Build loads every run directory and draws the figures. Damaged runs
// are loaded with their problems, never refused.
func Build(cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rep := &Report{Title: cfg.Title, Generated: cfg.Now().UTC()}
	for i, d := range cfg.Dirs {
		r := Load(d)
		rep.Runs = append(rep.Runs, r)
		prefix := ""
		if len(cfg.Dirs) > 1 {
			prefix = fmt.Sprintf("run%d-", i+1)
		}
		figs, err := runFigures(r, prefix)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		rep.RunFigures = append(rep.RunFigures, figs)
	}
	if rep.Title == "" {
		rep.Title = defaultTitle(rep.Runs)
	}
	cmp, err := comparisonFigures(rep.Runs)
	if err != nil {
		return nil, err
	}
	rep.Comparison = cmp
	if len(rep.Runs) > 1 {
		rep.CompareText = compareStats(cfg.Dirs)
	}
	return rep, nil
}

func defaultTitle(runs []*Run) string {
	r := runs[0].Record
	if len(runs) == 1 {
		return fmt.Sprintf("sagebench %s %s — %s", r.Workload, r.Name, runs[0].Label())
	}
	return fmt.Sprintf("sagebench: %d runs compared", len(runs))
}

// compareStats runs `compare` over the run directories (one column per
// run) and returns its text table, or the reason it could not.
func compareStats(dirs []string) string {
	var sets []*benchset.Set
	for i, d := range dirs {
		s, err := benchset.ReadRunDir(d, fmt.Sprintf("run%d", i+1))
		if err != nil {
			return fmt.Sprintf("no comparison statistics: %v", err)
		}
		sets = append(sets, s)
	}
	results, units := benchset.Combine(sets...)
	rep, err := stats.Compare(results, units, stats.Options{})
	if err != nil {
		return fmt.Sprintf("no comparison statistics: %v", err)
	}
	var buf bytes.Buffer
	if err := rep.Write(&buf, "text"); err != nil {
		return fmt.Sprintf("no comparison statistics: %v", err)
	}
	return buf.String()
}

// AllFigures lists every figure of the report in page order.
func (rep *Report) AllFigures() []*Figure {
	var out []*Figure
	for _, fs := range rep.RunFigures {
		out = append(out, fs...)
	}
	return append(out, rep.Comparison...)
}

// WriteFigures writes each figure as DIR/ID.format (svg or png) and
// returns the paths written.
func (rep *Report) WriteFigures(dir, format string) ([]string, error) {
	if format != "svg" && format != "png" {
		return nil, fmt.Errorf("figure format %q: want svg or png", format)
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
