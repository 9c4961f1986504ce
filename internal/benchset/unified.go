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
// problem: the same run would be counted twice. Each row's validity
// (metadata.valid, metadata.complete) becomes a Run. A row of one
// configuration of a run (metadata.config, e.g. policy=fifo) is named with
// it; an aggregate row (metadata.aggregate) is skipped.
func ReadUnified(r io.Reader, file, label string) (*Set, error) {
	s := newSet(file, label)
	seen := map[string]int{}
	n := 0
	err := record.ReadUnified(&boundedReader{r: r, file: file, limit: MaxInputBytes}, file, func(line int, u record.Unified) {
		if n++; n > MaxSamples {
			return
		}
		if prev, dup := seen[u.RunID]; dup {
			s.problem(file, line, "duplicate run_id %q (first on line %d)", u.RunID, prev)
			return
		}
		seen[u.RunID] = line
		if agg, _ := u.Metadata["aggregate"].(bool); agg {
			return // a summary of rows already read: not one more sample
		}
		res := unifiedResult(u)
		s.Runs = append(s.Runs, unifiedRun(u, fmt.Sprintf("%s:%d", file, line), string(res.Name.Full())))
		res.SetConfig(".file", label)
		if msg := badValue(res); msg != "" {
			s.problem(file, line, "run %s: %s", u.RunID, msg)
			return
		}
		if len(res.Values) == 0 {
			return // the run measured none of the figures: no sample to compare
		}
		s.Results = append(s.Results, res)
	})
	if n > MaxSamples {
		return nil, &TooLargeError{File: file, What: "samples", Limit: MaxSamples}
	}
	for _, e := range unwrapJoined(err) {
		var tl *TooLargeError
		if errors.As(e, &tl) {
			return nil, tl
		}
		var le *record.LineError
		if errors.As(e, &le) {
			s.problem(le.File, le.Line, "%v", le.Err)
		} else {
			s.problem(file, 0, "%v", e)
		}
	}
	return s, nil
}

// unifiedRun is the validity a row carries in metadata.valid,
// metadata.complete and metadata.invalid_reasons (as sagebench writes
// them). A row without them is taken as invalid: its run's validity is
// not known.
func unifiedRun(u record.Unified, where, name string) Run {
	r := Run{Dir: where, ID: u.RunID, Name: name}
	r.WorkloadHash, _ = u.Metadata["workload_hash"].(string)
	valid, okV := u.Metadata["valid"].(bool)
	complete, okC := u.Metadata["complete"].(bool)
	if !okV || !okC {
		r.Reasons = []string{"validity not recorded (no metadata.valid and metadata.complete)"}
		return r
	}
	r.Valid, r.Complete = valid, complete
	reasons, _ := u.Metadata["invalid_reasons"].([]any)
	for _, x := range reasons {
		r.Reasons = append(r.Reasons, fmt.Sprint(x))
	}
	return r
}

func unifiedResult(u record.Unified) *benchfmt.Result {
	name := fmt.Sprintf("%s/backend=%s/nodes=%d/parallelism=%d", u.Workload, u.Backend, u.Nodes, u.Parallelism)
	if c, ok := u.Metadata["config"].(string); ok && c != "" {
		name += "/" + c // one configuration of a run (a policy, a scale)
	}
	res := &benchfmt.Result{Name: benchfmt.Name(name), Iters: 1}
	for _, v := range []struct {
		v    *float64
		unit string
	}{{u.Throughput, "req/s"}, {u.LatencyP50, "p50-ms"}, {u.LatencyP95, "p95-ms"}, {u.LatencyP99, "p99-ms"}, {u.SuccessRate, "success-rate"}} {
		if v.v != nil { // null: not measured in this run, no sample
			res.Values = append(res.Values, value(*v.v, v.unit))
		}
	}
	return res
}
