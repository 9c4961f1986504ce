package run

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// writeRecords writes run.json, summary.md and bench.txt into dir and
// appends the unified rows under the output root.
func writeRecords(dir string, r runconfig.Resolved, run *record.Run, o workload.Outcome) error {
	if err := record.WriteFiles(dir, o.Files); err != nil {
		return err
	}
	if err := record.WriteJSONAtomic(filepath.Join(dir, "run.json"), run); err != nil {
		return err
	}
	var md bytes.Buffer
	writeMarkdown(&md, run, r.Spec, o)
	if err := record.WriteFileAtomic(filepath.Join(dir, "summary.md"), md.Bytes()); err != nil {
		return err
	}
	var bench bytes.Buffer
	hdr := record.BenchHeader{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Pkg: "github.com/sagebench/sagebench/internal/workload", CPU: run.Environment.CPUModel}
	lines := benchLines(r.Spec, run, o.Phases)
	if o.Bench != nil {
		lines = workloadBench(r.Spec, run, o.Bench)
	}
	if err := record.WriteBench(&bench, hdr, lines); err != nil {
		return err
	}
	if err := record.WriteFileAtomic(filepath.Join(dir, "bench.txt"), bench.Bytes()); err != nil {
		return err
	}
	if err := record.AppendUnified(r.Shared.OutputDir, unifiedRow(r, run)); err != nil {
		return err
	}
	for _, row := range o.Rows {
		if err := record.AppendUnified(r.Shared.OutputDir, configRow(r, run, row)); err != nil {
			return err
		}
	}
	return nil
}

// workloadBench prefixes the workload's own bench lines with the stem and
// backend.
func workloadBench(spec workload.Spec, run *record.Run, own []record.BenchLine) []record.BenchLine {
	out := make([]record.BenchLine, 0, len(own))
	for _, l := range own {
		l.Name = spec.BenchName() + "/backend=" + run.Backend + "/" + l.Name
		out = append(out, l)
	}
	return out
}

// configRow is the unified row of one configuration of a run: the run's
// identity and metadata, the configuration's figures, metadata.config.
func configRow(r runconfig.Resolved, run *record.Run, row workload.Row) record.Unified {
	u := unifiedRow(r, run)
	u.RunID += "/" + row.Config // its own id: readers count each row once
	u.Throughput, u.LatencyP50, u.LatencyP95, u.LatencyP99 = finite(row.Throughput), finite(row.LatencyP50), finite(row.LatencyP95), finite(row.LatencyP99)
	u.SuccessRate, u.DurationSeconds = finite(row.SuccessRate), finite(row.DurationSeconds)
	md := make(map[string]any, len(u.Metadata)+len(row.Metadata)+1)
	for k, v := range u.Metadata {
		md[k] = v
	}
	for k, v := range row.Metadata {
		md[k] = v
	}
	md["config"] = row.Config
	u.Metadata = md
	return u
}

// benchLines gives one line per configuration (phase and request type)
// with successes, e.g.
// BenchmarkQ2ControlMix/backend=sage/policy=fifo/type=llm N <mean e2e> ns/op …
func benchLines(spec workload.Spec, run *record.Run, phases []summary.Phase) []record.BenchLine {
	var lines []record.BenchLine
	for _, g := range configGroups(run.Summary.Groups, phases) {
		if g.Count == g.Errors {
			continue // nothing measured
		}
		name := spec.BenchName() + "/backend=" + run.Backend
		d := phasesDuration(phases, "")
		if phase, ok := g.Labels[summary.LabelPhase]; ok {
			name += "/" + phaseKey(spec) + "=" + phase
			d = phasesDuration(phases, phase)
		}
		lines = append(lines, record.BenchLine{Name: name + "/type=" + g.Labels[summary.LabelType],
			N: g.Count, Values: benchValues(g, d)})
	}
	return lines
}

// configGroups returns the groups of one configuration each: phase×type
// when the phases are named, else per type.
func configGroups(groups []record.Group, phases []summary.Phase) []record.Group {
	named := len(phases) > 0 && phases[0].Name != ""
	var out []record.Group
	for _, g := range groups {
		_, hasType := g.Labels[summary.LabelType]
		_, hasPhase := g.Labels[summary.LabelPhase]
		want := 1
		if named {
			want = 2
		}
		if hasType && hasPhase == named && len(g.Labels) == want {
			out = append(out, g)
		}
	}
	order := map[string]int{}
	for i, p := range phases {
		order[p.Name] = i
	}
	slices.SortStableFunc(out, func(a, b record.Group) int { // phases in run order
		return cmp.Compare(order[a.Labels[summary.LabelPhase]], order[b.Labels[summary.LabelPhase]])
	})
	return out
}

// phasesDuration is the wall time of phase name, or of all phases ("").
func phasesDuration(phases []summary.Phase, name string) time.Duration {
	var d time.Duration
	for _, p := range phases {
		if name == "" || p.Name == name {
			d += p.Duration()
		}
	}
	return d
}

func phaseKey(spec workload.Spec) string {
	if spec.PhaseLabel != "" {
		return spec.PhaseLabel
	}
	return "phase"
}

func benchValues(g record.Group, d time.Duration) []record.BenchValue {
	rate := 0.0
	if d > 0 {
		rate = float64(g.Count-g.Errors) / d.Seconds()
	}
	v := []record.BenchValue{
		{Value: g.E2E.Mean * 1e6, Unit: "ns/op"},
		{Value: g.E2E.P50, Unit: "p50-ms"},
		{Value: g.E2E.P99, Unit: "p99-ms"},
		{Value: rate, Unit: "req/s"},
		{Value: g.Goodput, Unit: "goodput-req/s"},
		{Value: g.SLOAttainment, Unit: "slo-attainment"},
	}
	if g.TTFT.Count > 0 {
		v = append(v, record.BenchValue{Value: g.TTFT.P99, Unit: "ttft-p99-ms"})
	}
	if g.Errors > 0 {
		v = append(v, record.BenchValue{Value: float64(g.Errors) / float64(g.Count), Unit: "error-ratio"})
	}
	return v
}

// unifiedRow maps a run onto the schema of the original benchmark_sage.
func unifiedRow(r runconfig.Resolved, run *record.Run) record.Unified {
	s := run.Summary
	return record.Unified{
		Backend: run.Backend, Workload: run.Workload, RunID: run.RunID, Seed: run.Seed,
		Nodes: r.Shared.Nodes, Parallelism: r.Shared.Parallelism,
		Throughput: s.Throughput, LatencyP50: s.E2E.P50, LatencyP95: s.E2E.P95, LatencyP99: s.E2E.P99,
		SuccessRate: s.SuccessRate, DurationSeconds: s.DurationSeconds,
		Timestamp:  run.StartedAt.UTC().Format(time.RFC3339),
		ConfigHash: run.ConfigHash, BackendHash: backendHash(run),
		Metadata: map[string]any{
			"name": run.Name, "entry": run.Entry, "repetition": run.Repetition,
			"complete": run.Complete, "valid": run.Valid, "invalid_reasons": run.InvalidReasons,
			"primary": s.Primary, "goodput": s.Goodput, "slo_attainment": s.SLOAttainment,
			"target": run.Target, "load_mode": run.LoadMode, "latency_unit": "ms", "workload_hash": run.WorkloadHash,
		},
	}
}

// backendHash identifies the build that ran the backend: the sagebench
// commit (short), or its version when the commit is unknown.
func backendHash(run *record.Run) string {
	if c := run.Environment.Commit; c != "" && c != "unknown" {
		return c[:min(len(c), 12)]
	}
	return fmt.Sprintf("%s-%s", run.Backend, run.Environment.Version)
}

// finite maps NaN and ±Inf (no values measured) to 0, which JSON carries.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
