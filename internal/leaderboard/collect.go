package leaderboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// Bounds of what aggregate reads, like compare's and gate's (package
// benchset): past any, Collect refuses the whole input with a
// *LimitError before it holds it (a 452 MB unified_results.jsonl took
// 43.6 s and 3.24 GB of RSS).
const (
	maxFiles      = 10000    // unified_results.jsonl files under one root
	MaxFileBytes  = 32 << 20 // bytes of one file
	MaxTotalBytes = 256 << 20
	MaxRows       = 100_000 // rows of all files together (~2 KB held each)
)

// LimitError is an input of aggregate over one of its bounds.
type LimitError struct {
	File  string
	What  string // "bytes", "bytes in all files together", "rows in all files together", "files"
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: more than %d %s, the most aggregate reads (see docs/hostile.md); aggregate a narrower directory or split the file", e.File, e.Limit, e.What)
}

// Row is one run as the leaderboard sees it.
type Row struct {
	record.Unified
	Config  string   `json:"config,omitempty"`
	Valid   bool     `json:"valid"`
	Reasons []string `json:"invalid_reasons,omitempty"`
	File    string   `json:"file"`
}

// Collection is every distinct run found, and what could not be read.
type Collection struct {
	Rows       []Row
	Duplicates int      // rows dropped because their run_id was seen before
	Aggregates int      // rows summarising repetitions (metadata.aggregate), left out
	Problems   []string // unreadable lines and files
}

// Collect reads every unified_results.jsonl under root (or root itself
// when it is that file). The first row of a run_id wins; later ones are
// counted as duplicates (the same run appended twice, or a results tree
// copied into another).
func Collect(root string) (*Collection, error) {
	files, err := findFiles(root)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no %s (sagebench run --output-dir DIR writes it)", root, record.UnifiedJSONL)
	}
	if err := checkSizes(files); err != nil {
		return nil, err
	}
	c := &Collection{}
	seen := map[string]bool{}
	rows := 0
	for _, f := range files {
		err := readFile(f, func(u record.Unified) {
			if rows++; rows > MaxRows {
				return
			}
			if agg, _ := u.Metadata["aggregate"].(bool); agg {
				c.Aggregates++ // the repetitions it summarises are rows of their own
				return
			}
			if seen[u.RunID] {
				c.Duplicates++
				return
			}
			seen[u.RunID] = true
			c.Rows = append(c.Rows, rowOf(u, f))
		})
		if le := (*LimitError)(nil); errors.As(err, &le) {
			return nil, le
		}
		if rows > MaxRows {
			return nil, &LimitError{File: f, What: "rows in all files together", Limit: MaxRows}
		}
		for _, e := range splitJoined(err) {
			c.Problems = append(c.Problems, e.Error())
		}
	}
	return c, nil
}

// checkSizes refuses, before anything is read, a file that is not a
// regular file (a FIFO would block, a device never end), one over
// MaxFileBytes, and files over MaxTotalBytes together.
func checkSizes(files []string) error {
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("results: %w", err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file; aggregate reads files only", f)
		}
		if st.Size() > MaxFileBytes {
			return &LimitError{File: f, What: "bytes", Limit: MaxFileBytes}
		}
		if total += st.Size(); total > MaxTotalBytes {
			return &LimitError{File: f, What: "bytes in all files together", Limit: MaxTotalBytes}
		}
	}
	return nil
}

func findFiles(root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if !st.IsDir() {
		return []string{root}, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == record.UnifiedJSONL {
			files = append(files, p)
			if len(files) > maxFiles {
				return &LimitError{File: root, What: record.UnifiedJSONL + " files", Limit: maxFiles}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	sort.Strings(files)
	return files, nil
}

func readFile(path string, each func(record.Unified)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: MaxFileBytes + 1} // a file grown since it was checked
	err = record.ReadUnified(lr, path, func(_ int, u record.Unified) { each(u) })
	if lr.N <= 0 {
		return &LimitError{File: path, What: "bytes", Limit: MaxFileBytes}
	}
	return err
}

// rowOf reads the configuration (metadata.config: one of several figures
// a run reports, e.g. a Q4 scale) and validity from metadata.valid and metadata.complete (as
// sagebench writes them); a row without them is invalid: its validity is
// not known.
func rowOf(u record.Unified, file string) Row {
	r := Row{Unified: u, File: file}
	r.Config, _ = u.Metadata["config"].(string)
	valid, okV := u.Metadata["valid"].(bool)
	complete, okC := u.Metadata["complete"].(bool)
	switch {
	case !okV || !okC:
		r.Reasons = []string{"validity not recorded (no metadata.valid and metadata.complete)"}
	case !complete:
		r.Reasons = []string{"run did not complete"}
	}
	if reasons, ok := u.Metadata["invalid_reasons"].([]any); ok {
		for _, x := range reasons {
			r.Reasons = append(r.Reasons, fmt.Sprint(x))
		}
	}
	r.Valid = okV && okC && valid && complete
	if !r.Valid && len(r.Reasons) == 0 {
		r.Reasons = []string{"marked invalid"}
	}
	return r
}

func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// primary is the row's primary metric, when it has one (schema 2).
func (r Row) primary() (result.Metric, bool) {
	if r.PrimaryMetric == "" || r.PrimaryState == "" {
		return result.Metric{}, false
	}
	m := result.Metric{Name: r.PrimaryMetric, Unit: r.PrimaryUnit, State: result.State(r.PrimaryState), Direction: result.Higher}
	if d, ok := primaryDirection(r); ok {
		m.Direction = d
	}
	if r.PrimaryValue != nil {
		m.Value = *r.PrimaryValue
	}
	if r.PrimaryLo != nil || r.PrimaryHi != nil {
		lo, hi := math.Inf(-1), math.Inf(1)
		if r.PrimaryLo != nil {
			lo = *r.PrimaryLo
		}
		if r.PrimaryHi != nil {
			hi = *r.PrimaryHi
		}
		m.Interval = &[2]float64{lo, hi}
	}
	if m.State != result.Measured && m.State != result.Bound {
		m.Reason = "as recorded"
	}
	return m, true
}

// primaryDirection is the direction of a row's primary metric
// (metadata.primary_direction).
func primaryDirection(r Row) (result.Direction, bool) {
	d, _ := r.Metadata["primary_direction"].(string)
	return result.Direction(d), d == string(result.Higher) || d == string(result.Lower)
}

// workloadHash is the row's metadata.workload_hash ("" when absent).
func (r Row) workloadHash() string {
	h, _ := r.Metadata["workload_hash"].(string)
	return h
}

// runConfig reads run_config from the run.json of the row's run, next to
// the unified file (OUTPUT_DIR/<q>/<run id>/run.json).
func (r Row) runConfig() (json.RawMessage, error) {
	run, err := record.ReadRun(r.runFile())
	if err != nil {
		return nil, err
	}
	return run.RunConfig, nil
}

// runFile is the run.json of the row's run (a run's configurations,
// "<run>/<config>", share it).
func (r Row) runFile() string {
	id, _, _ := strings.Cut(r.RunID, "/")
	return filepath.Join(filepath.Dir(r.File), strings.ToLower(r.Workload), id, "run.json")
}

// runConfigs reads each run.json's run_config once for a board: several
// entries and refused pairs name the same run.
type runConfigs map[string]runConfigRead

type runConfigRead struct {
	raw json.RawMessage
	err error
}

func (c runConfigs) of(r Row) (json.RawMessage, error) {
	p := r.runFile()
	v, ok := c[p]
	if !ok {
		v.raw, v.err = r.runConfig()
		c[p] = v
	}
	return v.raw, v.err
}
