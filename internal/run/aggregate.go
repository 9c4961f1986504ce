package run

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spread is one metric over the repetitions: mean, median, sample
// standard deviation and the 95 % confidence interval of the mean
// (Student's t; equal to the mean for one value).
type Spread struct {
	N      int       `json:"n"`
	Mean   float64   `json:"mean"`
	Median float64   `json:"median"`
	Stddev float64   `json:"stddev"`
	CILow  float64   `json:"ci95_low"`
	CIHigh float64   `json:"ci95_high"`
	Values []float64 `json:"values"`
}

// Aggregate is aggregate.json: an experiment's metrics over its
// repetitions.
type Aggregate struct {
	Workload    string            `json:"workload"`
	Name        string            `json:"name"`
	Backend     string            `json:"backend"`
	ConfigHash  string            `json:"config_hash"`
	Repetitions int               `json:"repetitions"`
	Valid       int               `json:"valid"`
	RunIDs      []string          `json:"run_ids"`
	Primary     string            `json:"primary"` // name of the primary metric
	Metrics     map[string]Spread `json:"metrics"` // primary, secondary and workload metrics
}

// aggregateOf folds the repetitions' summaries.
func aggregateOf(spec workload.Spec, results []Result) Aggregate {
	a := Aggregate{Workload: spec.ID, Name: spec.Name, Repetitions: len(results), Metrics: map[string]Spread{}}
	vals := map[string][]float64{}
	for _, r := range results {
		s := r.Run.Summary
		a.RunIDs = append(a.RunIDs, r.Run.RunID)
		a.Backend, a.ConfigHash, a.Primary = r.Run.Backend, r.Run.ConfigHash, s.Primary.Name
		if r.Run.Valid {
			a.Valid++
		}
		add := func(k string, v float64) {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals[k] = append(vals[k], v)
			}
		}
		add("primary:"+s.Primary.Name, s.Primary.Value)
		add("goodput", s.Goodput)
		add("throughput", s.Throughput)
		add("slo_attainment", s.SLOAttainment)
		add("success_rate", s.SuccessRate)
		add("e2e_p50_ms", s.E2E.P50)
		add("e2e_p99_ms", s.E2E.P99)
		for k, v := range s.Extra {
			if k != "primary" {
				add(k, v)
			}
		}
	}
	for k, v := range vals {
		a.Metrics[k] = spreadOf(v)
	}
	return a
}

// spreadOf computes the Spread of xs (len ≥ 1).
func spreadOf(xs []float64) Spread {
	s := Spread{N: len(xs), Values: xs}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	n := len(sorted)
	s.Median = sorted[n/2]
	if n%2 == 0 {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(n)
	s.CILow, s.CIHigh = s.Mean, s.Mean
	if n > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Stddev = math.Sqrt(ss / float64(n-1))
		h := tQuantile975(n-1) * s.Stddev / math.Sqrt(float64(n))
		s.CILow, s.CIHigh = s.Mean-h, s.Mean+h
	}
	return s
}

// t975 are Student's t 0.975 quantiles for 1..30 degrees of freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

func tQuantile975(df int) float64 {
	if df >= 1 && df <= len(t975) {
		return t975[df-1]
	}
	return 1.96
}

// writeAggregate writes, for two or more repetitions, aggregate.json and
// summary.md into OUTPUT_DIR/<q>/agg-<first run id>/, appends one
// unified row marked metadata.aggregate, and prints the section.
func writeAggregate(w io.Writer, r runconfig.Resolved, results []Result) error {
	if len(results) < 2 {
		return nil
	}
	a := aggregateOf(r.Spec, results)
	id := "agg-" + NewRunID(r.Spec, r.Shared.Backend, 0)
	dir := filepath.Join(r.Shared.OutputDir, r.Spec.Section(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the aggregate directory: %w", err)
	}
	if err := record.WriteJSONAtomic(filepath.Join(dir, "aggregate.json"), a); err != nil {
		return err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# %s %s — aggregate of %d repetitions\n\n", a.Workload, a.Name, a.Repetitions)
	writeAggregateTable(&md, a)
	if err := record.WriteFileAtomic(filepath.Join(dir, "summary.md"), md.Bytes()); err != nil {
		return err
	}
	if w != nil {
		fmt.Fprintf(w, "\n%s %s over %d repetitions (valid %d/%d); aggregate: %s\n", a.Workload, a.Name, a.Repetitions, a.Valid, a.Repetitions, dir)
		writeAggregateTable(w, a)
	}
	return record.AppendUnified(r.Shared.OutputDir, aggregateRow(r, results, a, id))
}

func writeAggregateTable(w io.Writer, a Aggregate) {
	keys := make([]string, 0, len(a.Metrics))
	for k := range a.Metrics {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int { // primary first, then by name
		return cmpBool(!strings.HasPrefix(x, "primary:"), !strings.HasPrefix(y, "primary:"), strings.Compare(x, y))
	})
	fmt.Fprintf(w, "| metric | n | mean | median | stddev | 95%% CI of the mean |\n|---|---|---|---|---|---|\n")
	for _, k := range keys {
		s := a.Metrics[k]
		fmt.Fprintf(w, "| %s | %d | %.4g | %.4g | %.3g | [%.4g, %.4g] |\n", k, s.N, s.Mean, s.Median, s.Stddev, s.CILow, s.CIHigh)
	}
}

func cmpBool(a, b bool, tie int) int {
	switch {
	case a == b:
		return tie
	case !a:
		return -1
	}
	return 1
}

// aggregateRow is the unified row of the aggregate: the means, marked
// metadata.aggregate, with every spread in metadata.metrics.
func aggregateRow(r runconfig.Resolved, results []Result, a Aggregate, id string) record.Unified {
	last := results[len(results)-1].Run
	u := unifiedRow(r, &last)
	u.RunID, u.Seed = id, results[0].Run.Seed
	u.Timestamp = time.Now().UTC().Format(time.RFC3339)
	mean := func(f func(record.Summary) float64) float64 {
		t := 0.0
		for _, res := range results {
			t += f(res.Run.Summary)
		}
		return t / float64(len(results))
	}
	u.Throughput = mean(func(s record.Summary) float64 { return s.Throughput })
	u.LatencyP50 = mean(func(s record.Summary) float64 { return s.E2E.P50 })
	u.LatencyP95 = mean(func(s record.Summary) float64 { return s.E2E.P95 })
	u.LatencyP99 = mean(func(s record.Summary) float64 { return s.E2E.P99 })
	u.SuccessRate = mean(func(s record.Summary) float64 { return s.SuccessRate })
	u.DurationSeconds = mean(func(s record.Summary) float64 { return s.DurationSeconds })
	u.Metadata = map[string]any{"name": a.Name, "entry": last.Entry, "aggregate": true, "repetitions": a.Repetitions,
		"valid_repetitions": a.Valid, "valid": a.Valid == a.Repetitions, "complete": true, "invalid_reasons": []string{},
		"run_ids": a.RunIDs, "primary": a.Primary, "metrics": a.Metrics, "latency_unit": "ms"}
	return u
}
