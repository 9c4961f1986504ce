package benchset

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
	"golang.org/x/perf/benchfmt"
)

// Files of a run directory.
const (
	runFile      = "run.json"
	requestsFile = "requests.jsonl"
	benchFile    = "bench.txt"
)

// ReadRunTree reads dir as one run directory when it holds run.json, and
// otherwise every run directory below it. A directory that holds
// requests.jsonl or bench.txt without run.json is an error, as is a tree
// with no run directory at all.
func ReadRunTree(dir, label string) (*Set, error) {
	dirs, err := findRunDirs(dir)
	if err != nil {
		return nil, err
	}
	s := newSet(dir, label)
	ids := map[string]string{}
	for _, d := range dirs {
		rs, err := ReadRunDir(d, label)
		if err != nil {
			return nil, err
		}
		for _, r := range rs.Runs {
			if prev, dup := ids[r.ID]; dup {
				rs.problem(filepath.Join(d, runFile), 0, "duplicate run_id %q (also in %s)", r.ID, prev)
			}
			ids[r.ID] = d
		}
		s.merge(rs)
	}
	return s, nil
}

func findRunDirs(root string) ([]string, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	var dirs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				// WalkDir does not follow it: the runs behind it (valid
				// or not) would be left out silently.
				return fmt.Errorf("%s is a symbolic link to a directory: runs are not read through links; copy the run directory into the tree or pass it on its own", path)
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		has := func(name string) bool {
			_, err := os.Stat(filepath.Join(path, name))
			return err == nil
		}
		switch {
		case has(runFile):
			// Walk on: a run nested in a run directory (valid or not)
			// must not be left out.
			dirs = append(dirs, path)
		case has(requestsFile) || has(benchFile):
			return fmt.Errorf("%s looks like a run directory but has no %s: pass a complete run directory (or bench.txt itself)", path, runFile)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no run directory (with %s) found", root, runFile)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// ReadRunDir reads one run directory: run.json (required), bench.txt when
// present (else results synthesized from the run summary) and
// requests.jsonl when present (per-request e2e latencies).
func ReadRunDir(dir, label string) (*Set, error) {
	run, err := record.ReadRun(filepath.Join(dir, runFile))
	if err != nil {
		return nil, err
	}
	s := newSet(dir, label)
	name := RunName(run)
	s.Runs = append(s.Runs, Run{Dir: dir, ID: run.RunID, Name: name,
		Valid: run.Valid, Complete: run.Complete, Reasons: run.InvalidReasons, Floor: run.MeasurementFloor,
		WorkloadHash: run.WorkloadHash, Config: run.RunConfig})
	if err := readRunBench(s, dir, run); err != nil {
		return nil, err
	}
	readRunRequests(s, dir, name)
	return s, nil
}

// siblingRun adds to s the validity of the run whose directory holds the
// file at path, if it is one: a run's bench.txt read on its own must not
// shed its run's valid: false.
func siblingRun(s *Set, path string) error {
	dir := filepath.Dir(path)
	runPath := filepath.Join(dir, runFile)
	if _, err := os.Stat(runPath); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	run, err := record.ReadRun(runPath)
	if err != nil {
		return fmt.Errorf("%s sits in a run directory: %w", path, err)
	}
	s.Runs = append(s.Runs, Run{Dir: dir, ID: run.RunID, Name: RunName(run),
		Valid: run.Valid, Complete: run.Complete, Reasons: run.InvalidReasons, Floor: run.MeasurementFloor,
		WorkloadHash: run.WorkloadHash, Config: run.RunConfig})
	return nil
}

// RunName is the benchmark name a run's results and latencies go under,
// e.g. "Q2ControlMix/backend=sage".
func RunName(r *record.Run) string {
	return fmt.Sprintf("%s%s/backend=%s", r.Workload, r.Name, r.Backend)
}

func readRunBench(s *Set, dir string, run *record.Run) error {
	path := filepath.Join(dir, benchFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if run.Summary.Requests <= 0 {
			s.problem(filepath.Join(dir, runFile), 0, "summary counts no requests and there is no %s: the run holds no evidence", benchFile)
			return nil
		}
		s.Results = append(s.Results, summaryResult(s, run, filepath.Join(dir, runFile)))
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading run: %w", err)
	}
	defer f.Close()
	bs, err := ReadBench(f, path, s.Label)
	if err != nil {
		return err
	}
	if len(bs.Results) == 0 {
		bs.problem(path, 0, "holds no benchmark results (the run's benchmark output is empty or failed)")
	}
	s.merge(bs)
	return nil
}

// summaryResult turns run.json's summary into one benchmark result:
// mean e2e latency as ns/op, p99-ms, req/s, goodput and slo-attainment.
// p99-ms is the E2E p99 counting a failed request +∞
// (summary.Quantile): left out when failures moved or reached its rank,
// since the successes' figure is then not the p99 (the result has no
// p99-ms, as benchstat reads a value that is not there; not an input
// problem, which compare would refuse).
func summaryResult(s *Set, run *record.Run, file string) *benchfmt.Result {
	sum := run.Summary
	r := &benchfmt.Result{Name: benchfmt.Name(RunName(run)), Iters: sum.Requests}
	r.SetConfig(".file", s.Label)
	add := func(v float64, unit string) {
		if v < 0 {
			s.problem(file, 0, "summary %s is negative (%v)", unit, v)
			return
		}
		r.Values = append(r.Values, value(v, unit))
	}
	add(sum.E2E.Mean*1e6, "ns/op")
	if p99 := summary.Quantile(summary.DefE2EP99, 0.99, sum.E2E, sum.Requests); p99.Measured() {
		add(p99.Value, "p99-ms")
	}
	add(sum.Throughput, "req/s")
	add(sum.Goodput, "goodput")
	add(sum.SLOAttainment, "slo-attainment")
	return r
}

func readRunRequests(s *Set, dir, name string) {
	path := filepath.Join(dir, requestsFile)
	var lat []float64
	err := record.ReadRequestsFile(path, func(_ int, r record.Request) {
		switch {
		case r.Kind == "stage":
			return // a transaction's stage: its transaction counts
		case !r.OK:
			lat = append(lat, math.Inf(1)) // failed or never ended: +∞
		default:
			lat = append(lat, r.E2EMs)
		}
	})
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	for _, e := range unwrapJoined(err) {
		var le *record.LineError
		if errors.As(e, &le) {
			s.problem(le.File, le.Line, "%v", le.Err)
		} else {
			s.problem(path, 0, "%v", e)
		}
	}
	if len(lat) > 0 {
		s.Latency[name] = append(s.Latency[name], lat...)
	}
}

func unwrapJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
