package paper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sagebench/sagebench/internal/runconfig"
)

// RunFunc runs one resolved configuration (one repetition) into its
// output root, as `sagebench run` does.
type RunFunc func(ctx context.Context, r runconfig.Resolved) error

// Config says what to make.
type Config struct {
	Experiment string // the experiment file
	// From renders saved results only, from this results root (nothing
	// is run); "" runs what is missing into the experiment's results.
	From   string
	Out    string // "" : the experiment's output
	Quick  bool   // every configuration at its quick scale
	DryRun bool   // plan only: say what exists and what would run
	Run    RunFunc
	Log    io.Writer // progress lines; nil: none
}

// UsageError is a bad experiment file or flag: the caller's to fix.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Outcome is what Make did.
type Outcome struct {
	Out      string
	Manifest *Manifest // nil on a dry run
	Cells    []*Cell
	Ran      []string // run IDs made now
	Invalid  []string // of those, the invalid ones (with their reasons)
}

// Make plans the experiment, runs the missing samples (unless From or
// DryRun) and renders the figures, tables and manifest.
func Make(ctx context.Context, cfg Config) (*Outcome, error) {
	e, err := Load(cfg.Experiment)
	if err != nil {
		return nil, &UsageError{err}
	}
	results := e.path(e.Results)
	if cfg.From != "" {
		results = cfg.From
	}
	o := &Outcome{Out: cfg.Out}
	if o.Out == "" {
		o.Out = e.path(e.Output)
	}
	if o.Cells, err = Plan(e, results, cfg.Quick); err != nil {
		return nil, &UsageError{err}
	}
	if _, err := Match(o.Cells, results); err != nil {
		return nil, &UsageError{fmt.Errorf("results %s: %w", results, err)}
	}
	logf(cfg.Log, "%s", planText(o.Cells))
	if cfg.DryRun {
		return o, nil
	}
	if cfg.From == "" {
		if err := runMissing(ctx, cfg, o, results); err != nil {
			return o, err
		}
	}
	if found(o.Cells) == 0 {
		return o, &UsageError{fmt.Errorf("no run of the experiment under %s: run it (sagebench paper %s) or name the results with --from", results, cfg.Experiment)}
	}
	o.Manifest, err = Render(e, o.Cells, o.Out, e.raw)
	return o, err
}

// runMissing runs each missing sample, then matches the results again.
func runMissing(ctx context.Context, cfg Config, o *Outcome, results string) error {
	missing := 0
	for _, c := range o.Cells {
		missing += len(c.Missing())
	}
	if missing == 0 {
		return nil
	}
	if cfg.Run == nil {
		return errors.New("paper: runs are missing and no runner was given")
	}
	for _, c := range o.Cells {
		for _, seed := range c.Missing() {
			r, err := c.ResolvedAt(seed)
			if err != nil {
				return &UsageError{fmt.Errorf("%s seed %d: %w", c.Label, seed, err)}
			}
			logf(cfg.Log, "paper: running %s seed %d", c.Label, seed)
			if err := cfg.Run(ctx, r); err != nil {
				return fmt.Errorf("%s seed %d: %w", c.Label, seed, err)
			}
		}
	}
	before := map[string]bool{}
	for _, c := range o.Cells {
		for _, f := range c.Runs() {
			before[f.Dir] = true
		}
	}
	if _, err := Match(o.Cells, results); err != nil {
		return err
	}
	for _, c := range o.Cells {
		for _, f := range c.Runs() {
			if !before[f.Dir] {
				o.Ran = append(o.Ran, f.Run.RunID)
				if !f.Run.Valid {
					o.Invalid = append(o.Invalid, fmt.Sprintf("%s (%s)", f.Run.RunID, strings.Join(f.Run.InvalidReasons, "; ")))
				}
			}
		}
	}
	return nil
}

func found(cells []*Cell) int {
	n := 0
	for _, c := range cells {
		n += len(c.Runs())
	}
	return n
}

// planText says per cell which runs were found and which are missing.
func planText(cells []*Cell) string {
	var b strings.Builder
	for _, c := range cells {
		fmt.Fprintf(&b, "paper: %s: %d of %d runs found", c.Label, len(c.Runs()), len(c.Seeds))
		if m := c.Missing(); len(m) > 0 {
			fmt.Fprintf(&b, ", missing seeds %v", m)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}
