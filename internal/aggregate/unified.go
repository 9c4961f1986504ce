package aggregate

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// Shape is what a run's unified row says of where it ran.
type Shape struct {
	Nodes       int
	Parallelism int
}

// Row maps a run onto the unified schema: the original benchmark_sage
// columns from the run's summary (null where nothing was measured) and
// its primary metric.
func Row(run *record.Run, sh Shape) record.Unified {
	s := run.Summary
	u := record.Unified{
		Backend: run.Backend, Workload: run.Workload, RunID: run.RunID, Seed: run.Seed,
		Nodes: sh.Nodes, Parallelism: sh.Parallelism,
		Throughput:  record.Sampled(s.Throughput, s.Requests),
		SuccessRate: record.Sampled(s.SuccessRate, s.Requests), DurationSeconds: record.F(s.DurationSeconds),
		Timestamp:  run.StartedAt.UTC().Format(time.RFC3339),
		ConfigHash: run.ConfigHash, BackendHash: BackendHash(run),
		Metadata: map[string]any{
			"name": run.Name, "entry": run.Entry, "repetition": run.Repetition,
			"complete": run.Complete, "valid": run.Valid, "invalid_reasons": run.InvalidReasons,
			"goodput": record.F(s.Goodput), "slo_attainment": record.F(s.SLOAttainment),
			"target": run.Target, "load_mode": run.LoadMode, "latency_unit": "ms", "workload_hash": run.WorkloadHash,
			"schema_version": record.SchemaVersion,
		},
	}
	SetLatency(&u, summary.Metrics(s))
	if s.Requests > int(s.E2E.Count) && s.E2E.Count > 0 {
		u.Metadata[summary.MetaLatencyOK] = map[string]any{"p50": record.F(s.E2E.P50), "p95": record.F(s.E2E.P95), "p99": record.F(s.E2E.P99),
			"n": s.E2E.Count, "note": "successes only: the failed requests left out"}
	}
	if run.Result != nil {
		SetPrimary(&u, run.Result.Primary)
		u.Metadata["answer"] = run.Result.Answer
		u.Metadata["targets_missed"] = run.Result.Missed()
	}
	return u
}

// SetLatency fills u's latency columns from the run-level E2E quantiles
// ms (a failed request counting +∞, summary.Quantile): the value when
// measured, else null, with each column's state — and the reason of a
// state other than measured — in the metadata (summary.LatencyCells).
func SetLatency(u *record.Unified, ms []result.Metric) {
	cells, meta := summary.LatencyCells(ms)
	u.LatencyP50, u.LatencyP95, u.LatencyP99 = cells[0], cells[1], cells[2]
	if u.Metadata == nil {
		u.Metadata = map[string]any{}
	}
	for k, v := range meta {
		u.Metadata[k] = v
	}
}

// SetPrimary puts m into u's primary columns.
func SetPrimary(u *record.Unified, m result.Metric) {
	u.PrimaryMetric, u.PrimaryUnit, u.PrimaryState = m.Name, m.Unit, string(m.State)
	u.PrimaryValue, u.PrimaryLo, u.PrimaryHi = nil, nil, nil
	if m.State == result.Measured {
		u.PrimaryValue = record.F(m.Value)
	}
	if m.Interval != nil {
		u.PrimaryLo, u.PrimaryHi = record.F(m.Interval[0]), record.F(m.Interval[1])
	}
	if u.Metadata == nil {
		u.Metadata = map[string]any{}
	}
	u.Metadata["primary_direction"] = string(m.Direction)
}

// BackendHash identifies the build that ran the backend: the sagebench
// commit (short), or its version when the commit is unknown.
func BackendHash(run *record.Run) string {
	if c := run.Environment.Commit; c != "" && c != "unknown" {
		return c[:min(len(c), 12)]
	}
	return fmt.Sprintf("%s-%s", run.Backend, run.Environment.Version)
}

// AggregateRow is the unified row of an aggregate: the estimates' means
// of the run-level figures, the primary metric's estimate, marked
// metadata.aggregate, with every estimate in metadata.metrics. last is
// the last repetition (for the identity columns), id the aggregate's id.
func AggregateRow(a Aggregate, last *record.Run, sh Shape, id string) record.Unified {
	u := Row(last, sh)
	u.RunID = id
	if len(a.Seeds) > 0 {
		u.Seed = a.Seeds[0]
	}
	u.Timestamp = time.Now().UTC().Format(time.RFC3339)
	mean := func(name string) *float64 {
		if e, ok := a.Metric(name); ok && e.Mean != nil {
			return e.Mean
		}
		return nil
	}
	u.Throughput, u.SuccessRate = mean(summary.DefThroughput.Name), mean(summary.DefSuccessRate.Name)
	u.DurationSeconds = nil
	u.Metadata = map[string]any{"name": a.Name, "entry": last.Entry, "aggregate": true, "repetitions": a.Repetitions,
		"valid_repetitions": a.Valid, "valid": a.Valid == a.Repetitions, "complete": true, "invalid_reasons": []string{},
		"run_ids": a.RunIDs, "duplicates": a.Duplicates, "primary": a.Primary, "metrics": a.Metrics, "latency_unit": "ms",
		"workload_hash": a.WorkloadHash, "schema_version": record.SchemaVersion}
	var lat []result.Metric // the estimates of the E2E quantiles, each counting failures +∞
	for _, c := range summary.LatencyColumns {
		if e, ok := a.Metric(c.Def.Name); ok {
			lat = append(lat, e.Metric())
		}
	}
	SetLatency(&u, lat)
	if e, ok := a.Metric(a.Primary); ok {
		SetPrimary(&u, e.Metric())
	} else {
		u.PrimaryMetric, u.PrimaryValue, u.PrimaryState = a.Primary, nil, string(result.NotMeasurable)
	}
	return u
}
