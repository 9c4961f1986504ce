package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/record"
)

// maxProblems bounds the problems listed per run.
const maxProblems = 30

// Sample is what the report keeps of one request: enough to draw, small
// enough to hold a long run.
type Sample struct {
	E2EMs  float64
	EndS   float64 // seconds since the run started
	OK     bool
	Labels map[string]string // type, tenant, priority, phase (those set)
}

// Run is one loaded run directory.
type Run struct {
	Dir      string
	Record   *record.Run // never nil: a stand-in when run.json is unreadable
	Samples  []Sample
	Metrics  *capture.Timeline // nil without metrics.jsonl
	Problems []string
}

// Label names the run in legends: its run id, or the directory.
func (r *Run) Label() string {
	if r.Record.RunID != "" {
		return r.Record.RunID
	}
	return filepath.Base(r.Dir)
}

// Valid reports whether the run is complete and valid with nothing unreadable.
func (r *Run) Valid() bool {
	return r.Record.Valid && r.Record.Complete && len(r.Problems) == 0
}

// Load reads a run directory. It never refuses one: whatever is missing or
// unreadable becomes a problem shown in the banner.
func Load(dir string) *Run {
	r := &Run{Dir: dir}
	rec, err := record.ReadRun(filepath.Join(dir, "run.json"))
	if err != nil {
		r.problem("run.json: %v", err)
		rec = &record.Run{RunID: filepath.Base(dir), InvalidReasons: []string{"run.json is missing or unreadable"}}
	}
	r.Record = rec
	r.loadRequests(filepath.Join(dir, "requests.jsonl"))
	r.loadMetrics(filepath.Join(dir, capture.MetricsFile))
	return r
}

func (r *Run) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

func (r *Run) loadRequests(path string) {
	err := record.ReadRequestsFile(path, func(_ int, q record.Request) {
		if q.Kind == "stage" {
			return // stages are inside their transaction's latency
		}
		r.Samples = append(r.Samples, Sample{E2EMs: q.E2EMs, EndS: float64(q.EndNS) / 1e9, OK: q.OK, Labels: labelsOf(q)})
	})
	if errors.Is(err, os.ErrNotExist) {
		r.problem("requests.jsonl is missing: no latency figures")
		return
	}
	for _, line := range splitJoined(err) {
		r.problem("%v", line)
	}
}

func (r *Run) loadMetrics(path string) {
	tl, err := capture.ReadMetricsFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return // a target without /metrics, or an older run: not a problem
	}
	r.Metrics = tl
	for _, line := range splitJoined(err) {
		r.problem("%v", line)
	}
}

// splitJoined lists the errors inside an errors.Join result.
func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func labelsOf(q record.Request) map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{"type": q.Type, "tenant": q.Tenant, "priority": q.Priority, "phase": q.Phase} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// groupDimension picks the label that splits the run's samples into
// several groups, preferring phase (policies), then tenant, priority and
// type; "" when none varies.
func groupDimension(samples []Sample) string {
	for _, dim := range []string{"phase", "tenant", "priority", "type"} {
		seen := map[string]bool{}
		for _, s := range samples {
			seen[s.Labels[dim]] = true
			if len(seen) > 1 {
				return dim
			}
		}
	}
	return ""
}

// groupSamples splits E2E latencies of successful samples by dim, in name order.
func groupSamples(samples []Sample, dim string) ([]string, map[string][]float64) {
	groups := map[string][]float64{}
	for _, s := range samples {
		if !s.OK {
			continue
		}
		k := "all"
		if dim != "" {
			k = dim + "=" + s.Labels[dim]
		}
		groups[k] = append(groups[k], s.E2EMs)
	}
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, groups
}

// safeName turns a label into a file-name part.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
