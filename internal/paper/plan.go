package paper

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/report"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/workload"
)

// Cell is one configuration, backend and scale of the experiment: its
// samples (one run per seed) and the runs found for them.
type Cell struct {
	Q        string
	Name     string // the Q's name (ControlMix)
	Label    string
	Backend  string
	Scale    string
	Resolved runconfig.Resolved // at the first seed
	Key      string             // report.ConfigKey of the resolved run_config
	Seeds    []int64            // wanted: each seed + each repetition
	// Found are the runs matched per seed (a seed without one is
	// missing).
	Found map[int64]*Found
	entry Entry
	file  *runconfig.File
}

// Found is a run of a cell.
type Found struct {
	Dir string
	Run *record.Run
}

// Missing lists the seeds of c without a run.
func (c *Cell) Missing() []int64 {
	var out []int64
	for _, s := range c.Seeds {
		if c.Found[s] == nil {
			out = append(out, s)
		}
	}
	return out
}

// Runs are c's runs in seed order.
func (c *Cell) Runs() []*Found {
	var out []*Found
	for _, s := range c.Seeds {
		if f := c.Found[s]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

// Plan resolves the experiment's cells (quick: every cell at its quick
// scale) with results as the output root of the runs it would make.
func Plan(e *Experiment, results string, quick bool) ([]*Cell, error) {
	var cells []*Cell
	for i, en := range e.Runs {
		spec, _ := catalog.Lookup(en.Q)
		scale := en.Scale
		if quick {
			scale = "quick"
		}
		for _, b := range en.Backends {
			c, err := planCell(e, en, spec, b, scale, results)
			if err != nil {
				return nil, fmt.Errorf("runs[%d] (%s, %s): %w", i, en.Q, b, err)
			}
			cells = append(cells, c)
		}
	}
	return cells, nil
}

func planCell(e *Experiment, en Entry, spec workload.Spec, backend, scale, results string) (*Cell, error) {
	shared := runconfig.DefaultShared()
	var file *runconfig.File
	if en.Config != "" {
		f, err := runconfig.LoadFile(e.path(en.Config), &shared, os.LookupEnv)
		if err != nil {
			return nil, err
		}
		file = f
	}
	shared.Backend, shared.Quick, shared.OutputDir, shared.Repeat, shared.Seed = backend, scale == "quick", results, 1, en.Seeds[0]
	r, _, err := runconfig.Resolve(spec, shared, file, workload.Overrides{})
	if err != nil {
		return nil, err
	}
	c := &Cell{Q: spec.ID, Name: spec.Name, Backend: backend, Scale: scale, Resolved: r, Key: report.ConfigKey(r.RunConfig),
		Found: map[int64]*Found{}, entry: en, file: file}
	c.Label = en.Label
	if c.Label == "" {
		c.Label = strings.Join([]string{spec.ID, scale, backend}, " ")
	}
	for _, s := range en.Seeds {
		for rep := range en.Repeat {
			if !slices.Contains(c.Seeds, s+int64(rep)) {
				c.Seeds = append(c.Seeds, s+int64(rep))
			}
		}
	}
	return c, nil
}

// Match finds the cells' runs under root: a complete run whose
// configuration key and seed are a cell's (a valid run preferred over an
// invalid one, then the first in directory order). It returns how many
// run directories it read.
func Match(cells []*Cell, root string) (int, error) {
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return 0, nil
	}
	dirs, _, err := report.Discover([]string{root})
	if errors.Is(err, report.ErrNoRuns) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	byKey := map[string][]*Cell{}
	for _, c := range cells {
		byKey[c.Key] = append(byKey[c.Key], c)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		run, err := record.ReadRun(d + string(os.PathSeparator) + "run.json")
		if err != nil || !run.Complete {
			continue
		}
		for _, c := range byKey[report.ConfigKey(run.RunConfig)] {
			prev, ok := c.Found[run.Seed]
			if slices.Contains(c.Seeds, run.Seed) && (!ok || !prev.Run.Valid && run.Valid) {
				c.Found[run.Seed] = &Found{Dir: d, Run: run}
			}
		}
	}
	return len(dirs), nil
}

// Resolved returns the configuration of c's run at seed (as `run -e Q
// --seed SEED` with c's config file, scale and backend).
func (c *Cell) ResolvedAt(seed int64) (runconfig.Resolved, error) {
	shared := c.Resolved.Shared
	shared.Seed = seed
	r, _, err := runconfig.Resolve(c.Resolved.Spec, shared, c.file, workload.Overrides{})
	return r, err
}
