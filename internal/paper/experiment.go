package paper

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/strictyaml"
)

// Experiment is an experiment file.
type Experiment struct {
	// Name titles the tables' captions and the manifest.
	Name string `yaml:"name"`
	// Results is the results root runs are read from and written to
	// (relative to the experiment file; default results).
	Results string `yaml:"results"`
	// Output is where figures, tables and the manifest go (relative to
	// the experiment file; default paper).
	Output string `yaml:"output"`
	// Confidence of the intervals (default 0.95).
	Confidence float64 `yaml:"confidence"`
	Figures    Figures `yaml:"figures"`
	// Runs are the configurations, in the order the paper shows them.
	Runs []Entry `yaml:"runs"`

	dir string // the file's directory: relative paths start there
	raw []byte // the file as read (the manifest hashes it)
}

// Figures says how figures are written.
type Figures struct {
	Formats []string `yaml:"formats"` // svg, pdf (default both)
	Widths  []string `yaml:"widths"`  // column, page (default both)
}

// Entry is one configuration of the experiment.
type Entry struct {
	Q        string   `yaml:"q"`        // Q1..Q8 (or its name)
	Label    string   `yaml:"label"`    // its name in legends and tables (default: Q, scale, backend)
	Config   string   `yaml:"config"`   // run config file (as `run -c`), relative to the experiment file
	Scale    string   `yaml:"scale"`    // quick | full (default full)
	Backends []string `yaml:"backends"` // default [sage]
	Seeds    []int64  `yaml:"seeds"`    // default [42]
	Repeat   int      `yaml:"repeat"`   // runs per seed, seeded seed+rep (default 1)
}

// Limits of an experiment.
const (
	maxEntries = 64
	maxSamples = 1000 // runs per experiment
	maxRepeat  = 100
)

// Load reads and validates an experiment file.
func Load(path string) (*Experiment, error) {
	b, err := strictyaml.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e Experiment
	if err := strictyaml.Unmarshal(b, &e); err != nil {
		return nil, strictyaml.OneLine(path, b, err)
	}
	e.dir, e.raw = filepath.Dir(path), b
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &e, nil
}

// Validate applies the defaults and reports the first bad field.
func (e *Experiment) Validate() error {
	def(&e.Results, "results")
	def(&e.Output, "paper")
	if e.Confidence == 0 {
		e.Confidence = 0.95
	}
	if !(e.Confidence > 0 && e.Confidence < 1) {
		return fmt.Errorf("confidence %v: want a level in (0, 1), e.g. 0.95", e.Confidence)
	}
	if err := e.Figures.validate(); err != nil {
		return err
	}
	switch {
	case len(e.Runs) == 0:
		return fmt.Errorf("runs: none; list at least one, e.g. runs: [{q: Q2}]")
	case len(e.Runs) > maxEntries:
		return fmt.Errorf("runs: %d entries, at most %d", len(e.Runs), maxEntries)
	}
	samples := 0
	for i := range e.Runs {
		if err := e.Runs[i].validate(); err != nil {
			return fmt.Errorf("runs[%d]: %w", i, err)
		}
		samples += len(e.Runs[i].Backends) * len(e.Runs[i].Seeds) * e.Runs[i].Repeat
	}
	if samples > maxSamples {
		return fmt.Errorf("runs: %d runs in all, at most %d", samples, maxSamples)
	}
	return nil
}

func (f *Figures) validate() error {
	if len(f.Formats) == 0 {
		f.Formats = []string{"svg", "pdf"}
	}
	if len(f.Widths) == 0 {
		f.Widths = []string{"column", "page"}
	}
	for _, x := range f.Formats {
		if x != "svg" && x != "pdf" {
			return fmt.Errorf("figures.formats: %q: want svg or pdf", x)
		}
	}
	for _, w := range f.Widths {
		if _, ok := widths[w]; !ok {
			return fmt.Errorf("figures.widths: %q: want column (3.5 in) or page (7 in)", w)
		}
	}
	return nil
}

func (en *Entry) validate() error {
	spec, err := catalog.Lookup(en.Q)
	if err != nil {
		return fmt.Errorf("q: %w", err)
	}
	en.Q = spec.ID
	def(&en.Scale, "full")
	if en.Scale != "full" && en.Scale != "quick" {
		return fmt.Errorf("scale %q: want full or quick", en.Scale)
	}
	if len(en.Backends) == 0 {
		en.Backends = []string{"sage"}
	}
	for _, b := range en.Backends {
		if b != "sage" && b != "ray" {
			return fmt.Errorf("backends: %q: want sage or ray", b)
		}
	}
	if len(en.Seeds) == 0 {
		en.Seeds = []int64{42}
	}
	if en.Repeat == 0 {
		en.Repeat = 1
	}
	if en.Repeat < 1 || en.Repeat > maxRepeat {
		return fmt.Errorf("repeat %d: want 1 to %d runs per seed", en.Repeat, maxRepeat)
	}
	if slices.ContainsFunc(en.Seeds, func(s int64) bool { return s < 0 }) {
		return fmt.Errorf("seeds: want seeds ≥ 0")
	}
	if strings.ContainsAny(en.Label, "\n\r") {
		return fmt.Errorf("label: one line, please")
	}
	return nil
}

func def(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

// path resolves p against the experiment file's directory.
func (e *Experiment) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}
