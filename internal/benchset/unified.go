package benchset

import (
	"errors"
	"fmt"
	"io"

	"github.com/sagebench/sagebench/internal/record"
	"golang.org/x/perf/benchfmt"
)

// ReadUnified reads unified_results.jsonl rows from r, one result per row
// named <workload>/backend=…/nodes=…/parallelism=… with units req/s,
// p50-ms, p95-ms, p99-ms and success-rate. A run_id seen twice is a
// problem: the same run would be counted twice.
func ReadUnified(r io.Reader, file, label string) (*Set, error) {
	s := newSet(file, label)
	seen := map[string]int{}
	err := record.ReadUnified(r, file, func(line int, u record.Unified) {
		if prev, dup := seen[u.RunID]; dup {
			s.problem(file, line, "duplicate run_id %q (first on line %d)", u.RunID, prev)
			return
		}
		seen[u.RunID] = line
		res := unifiedResult(u)
		res.SetConfig(".file", label)
		if msg := badValue(res); msg != "" {
			s.problem(file, line, "run %s: %s", u.RunID, msg)
			return
		}
		s.Results = append(s.Results, res)
	})
	for _, e := range unwrapJoined(err) {
		var le *record.LineError
		if errors.As(e, &le) {
			s.problem(le.File, le.Line, "%v", le.Err)
		} else {
			s.problem(file, 0, "%v", e)
		}
	}
	return s, nil
}

func unifiedResult(u record.Unified) *benchfmt.Result {
	name := fmt.Sprintf("%s/backend=%s/nodes=%d/parallelism=%d", u.Workload, u.Backend, u.Nodes, u.Parallelism)
	return &benchfmt.Result{
		Name:  benchfmt.Name(name),
		Iters: 1,
		Values: []benchfmt.Value{
			value(u.Throughput, "req/s"),
			value(u.LatencyP50, "p50-ms"),
			value(u.LatencyP95, "p95-ms"),
			value(u.LatencyP99, "p99-ms"),
			value(u.SuccessRate, "success-rate"),
		},
	}
}
