package benchset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sagebench/sagebench/internal/record"

	"golang.org/x/perf/benchfmt"
)

// Set is what one input contributes to a comparison.
type Set struct {
	// Source is the path the set was read from.
	Source string
	// Label is the value of the .file key of every result: the column the
	// results fall in when sets are compared.
	Label string
	// Results are the benchmark results, each a private copy.
	Results []*benchfmt.Result
	// Units is the unit metadata (assume=, better=) declared by the input.
	Units benchfmt.UnitMetadataMap
	// Runs are the run directories read, with their validity.
	Runs []Run
	// Latency holds per-request end-to-end latencies in milliseconds, keyed
	// by the run's benchmark name (e.g. "Q2ControlMix/backend=sage"); a
	// failed request is +Inf (the one failure rule: a quantile counts it
	// as +∞), so a reader of a mean takes the finite values.
	Latency map[string][]float64
	// Summaries holds the statistics an input declares per benchmark
	// beyond its samples (pytest-benchmark's stats), keyed by name.
	Summaries map[string]Summary
	// Problems are the unreadable lines and broken inputs met while reading.
	Problems []Problem
}

// Run is the validity record of one run directory.
type Run struct {
	Dir      string
	ID       string
	Name     string // benchmark name of the run, the Latency key
	Valid    bool
	Complete bool
	Reasons  []string
	// Floor is the run's measurement floor, when it was calibrated.
	Floor *record.Floor
	// WorkloadHash is the run's workload_hash ("" when its record has
	// none); Config its run_config, when read from run.json.
	WorkloadHash string
	Config       json.RawMessage
}

// Summary is what a pytest-benchmark JSON says about one benchmark, in
// milliseconds. DataMs is nil unless the run saved its per-round times
// (--benchmark-save-data).
type Summary struct {
	Rounds int
	MeanMs float64
	DataMs []float64
}

// Problem is one piece of input that could not be used. Line is 0 when the
// problem concerns a whole file.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

func newSet(source, label string) *Set {
	return &Set{Source: source, Label: label, Units: benchfmt.UnitMetadataMap{}, Latency: map[string][]float64{}, Summaries: map[string]Summary{}}
}

func (s *Set) problem(file string, line int, format string, args ...any) {
	s.Problems = append(s.Problems, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// merge appends everything in o to s.
func (s *Set) merge(o *Set) {
	s.Results = append(s.Results, o.Results...)
	for k, v := range o.Units {
		if _, ok := s.Units[k]; !ok {
			s.Units[k] = v
		}
	}
	s.Runs = append(s.Runs, o.Runs...)
	for k, v := range o.Latency {
		s.Latency[k] = append(s.Latency[k], v...)
	}
	for k, v := range o.Summaries {
		s.Summaries[k] = v
	}
	s.Problems = append(s.Problems, o.Problems...)
}

// Read reads the input at path, labelling its results label (the .file
// key; "" means path): a directory is a run directory or a tree of
// them, a *.jsonl file is unified_results.jsonl, a *.json file is
// pytest-benchmark JSON, anything else is Go benchmark text; a file inside a run directory also carries that run's
// validity. The error is for inputs that cannot be read at all (a
// missing path, a run directory without run.json); everything else lands
// in Set.Problems.
func Read(path, label string) (*Set, error) {
	if label == "" {
		label = path
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	if fi.IsDir() {
		return ReadRunTree(path, label)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	defer f.Close()
	var s *Set
	switch filepath.Ext(path) {
	case ".jsonl":
		s, err = ReadUnified(f, path, label)
	case ".json":
		s, err = ReadPytest(f, path, label)
	default:
		s, err = ReadBench(f, path, label)
	}
	if err != nil {
		return nil, err
	}
	if err := siblingRun(s, path); err != nil {
		return nil, err
	}
	return s, nil
}

// Combine returns the results of sets in order and their merged unit
// metadata (the first declaration of a unit's key wins), ready for
// stats.Compare.
func Combine(sets ...*Set) ([]*benchfmt.Result, benchfmt.UnitMetadataMap) {
	var results []*benchfmt.Result
	units := benchfmt.UnitMetadataMap{}
	for _, s := range sets {
		results = append(results, s.Results...)
		for k, v := range s.Units {
			if _, ok := units[k]; !ok {
				units[k] = v
			}
		}
	}
	return results, units
}
