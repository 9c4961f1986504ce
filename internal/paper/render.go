package paper

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/report"
	"github.com/sagebench/sagebench/internal/result"
)

// widths are the figure widths an experiment may ask for.
var widths = map[string]vg.Length{"column": chart.ColumnWidth, "page": chart.DoubleWidth}

// ManifestName is the manifest's file name in the output directory.
const ManifestName = "manifest.json"

// Manifest ties every file written to what it was made from.
type Manifest struct {
	Experiment       string         `json:"experiment"`
	ExperimentSHA256 string         `json:"experiment_sha256"`
	Confidence       float64        `json:"confidence"`
	Files            []ManifestFile `json:"files"`
	// Missing are the samples (cell and seed) no run was found for.
	Missing []string `json:"missing,omitempty"`
}

// ManifestFile is one file written.
type ManifestFile struct {
	Path   string `json:"path"` // relative to the output directory
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"` // figure | table
	Q      string `json:"q"`
	// Runs are the runs the file draws on; Excluded those left out of
	// its estimates (invalid), ConfigHashes their config hashes.
	Runs         []string `json:"runs"`
	Excluded     []string `json:"excluded,omitempty"`
	ConfigHashes []string `json:"config_hashes"`
	// Layout lists text that overlaps or is clipped in a figure (none
	// expected; said rather than hidden).
	Layout []string `json:"layout_problems,omitempty"`
}

// writer writes the files of one rendering and records them.
type writer struct {
	out string
	m   *Manifest
}

func (w *writer) write(rel, kind, q string, b []byte, cells []*Cell, layout []string) error {
	p := filepath.Join(w.out, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	if err := record.WriteFileAtomic(p, b); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	f := ManifestFile{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(sum[:]), Kind: kind, Q: q, Layout: layout}
	hashes := map[string]bool{}
	for _, c := range cells {
		for _, r := range c.Runs() {
			f.Runs = append(f.Runs, r.Run.RunID)
			if !r.Run.Valid {
				f.Excluded = append(f.Excluded, r.Run.RunID)
			}
			hashes[r.Run.ConfigHash] = true
		}
	}
	for h := range hashes {
		f.ConfigHashes = append(f.ConfigHashes, h)
	}
	slices.Sort(f.Runs)
	slices.Sort(f.Excluded)
	slices.Sort(f.ConfigHashes)
	w.m.Files = append(w.m.Files, f)
	return nil
}

// Render writes the figures, tables and manifest of cells into out and
// returns the manifest. expBytes are the experiment file's bytes (their
// hash goes into the manifest).
func Render(e *Experiment, cells []*Cell, out string, expBytes []byte) (*Manifest, error) {
	sum := sha256.Sum256(expBytes)
	m := &Manifest{Experiment: e.Name, ExperimentSHA256: hex.EncodeToString(sum[:]), Confidence: e.Confidence}
	w := &writer{out: out, m: m}
	for _, c := range cells {
		if miss := c.Missing(); len(miss) > 0 {
			m.Missing = append(m.Missing, fmt.Sprintf("%s: seeds %s", c.Label, seedList(miss)))
		}
	}
	for _, q := range qsOf(cells) {
		qc := cellsOf(cells, q)
		if err := renderQ(e, w, q, qc); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	slices.SortFunc(m.Files, func(a, b ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := record.WriteFileAtomic(filepath.Join(out, ManifestName), append(b, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

func qsOf(cells []*Cell) []string {
	var out []string
	for _, c := range cells {
		if !slices.Contains(out, c.Q) {
			out = append(out, c.Q)
		}
	}
	return out
}

func cellsOf(cells []*Cell, q string) []*Cell {
	var out []*Cell
	for _, c := range cells {
		if c.Q == q {
			out = append(out, c)
		}
	}
	return out
}

// renderQ writes a Q's answer figure at each width and format, its
// summary table and the pooled answer table of each cell.
func renderQ(e *Experiment, w *writer, q string, cells []*Cell) error {
	cols := make([]answer.Column, len(cells))
	for i, c := range cells {
		cols[i] = column(c, e.Confidence)
	}
	stem := strings.ToLower(q)
	for _, name := range e.Figures.Widths {
		f, err := answer.Figure(q, cols, widths[name])
		if err != nil {
			return err
		}
		layout := f.CheckText(widths[name])
		for _, format := range e.Figures.Formats {
			b, err := f.RenderAt(format, widths[name])
			if err != nil {
				return err
			}
			rel := filepath.Join("figures", fmt.Sprintf("%s-answer-%s.%s", stem, name, format))
			if err := w.write(rel, "figure", q, b, cells, layout); err != nil {
				return err
			}
		}
	}
	return writeTables(e, w, q, cells, cols)
}

// column is what a cell contributes to its Q's answer figure: its valid
// repetitions pooled; for a drill's timeline, its first valid run.
func column(c *Cell, conf float64) answer.Column {
	runs := c.Runs()
	col := answer.Column{Label: c.Label}
	if len(runs) == 0 {
		return col
	}
	rep := runs[0]
	for _, r := range runs {
		if r.Run.Valid {
			rep = r
			break
		}
	}
	col.RunConfig = rep.Run.RunConfig
	if answer.Timeline(c.Q) {
		return report.Load(rep.Dir).Column(fmt.Sprintf("%s (seed %d)", c.Label, rep.Run.Seed))
	}
	reps := make([]answer.Rep, len(runs))
	for i, r := range runs {
		reps[i] = answer.Rep{Result: r.Run.Result, Valid: r.Run.Valid}
	}
	col.Result = answer.Pool(reps, conf)
	return col
}

// aggregateOf estimates a cell's metrics over its runs (aggregate.Runs:
// duplicates of a seed left out, invalid runs excluded).
func aggregateOf(c *Cell, conf float64) aggregate.Aggregate {
	var runs []record.Run
	for _, r := range c.Runs() {
		runs = append(runs, *r.Run)
	}
	return aggregate.Runs(runs, conf)
}

// estimateCell is an estimate for a table: mean ± half-interval, the
// mean alone (one repetition), a bracket, "never" or "–".
func estimateCell(e aggregate.Estimate, ok bool) string {
	if !ok {
		return "–"
	}
	return result.Mean(e.Metric())
}

func seedList(seeds []int64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}
