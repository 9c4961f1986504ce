package run

import (
	"bytes"
	"path/filepath"
	"runtime"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/presenter"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
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
	p := presenter.Run{Record: run, Spec: r.Spec, Phases: o.Phases}
	var md bytes.Buffer
	presenter.Markdown(&md, p)
	if err := record.WriteFileAtomic(filepath.Join(dir, "summary.md"), md.Bytes()); err != nil {
		return err
	}
	var bench bytes.Buffer
	hdr := record.BenchHeader{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Pkg: "github.com/sagebench/sagebench/internal/workload", CPU: run.Environment.CPUModel}
	if err := record.WriteBench(&bench, hdr, presenter.BenchLines(p, o.Bench)); err != nil {
		return err
	}
	if err := record.WriteFileAtomic(filepath.Join(dir, "bench.txt"), bench.Bytes()); err != nil {
		return err
	}
	sh := unifiedShape(r)
	if err := record.AppendUnified(r.Shared.OutputDir, aggregate.Row(run, sh)); err != nil {
		return err
	}
	for _, row := range o.Rows {
		if err := record.AppendUnified(r.Shared.OutputDir, configRow(run, sh, row)); err != nil {
			return err
		}
	}
	return nil
}

func unifiedShape(r runconfig.Resolved) aggregate.Shape {
	return aggregate.Shape{Nodes: r.Shared.Nodes, Parallelism: r.Shared.Parallelism}
}

// configRow is the unified row of one configuration of a run: the run's
// identity and metadata, the configuration's figures, metadata.config.
func configRow(run *record.Run, sh aggregate.Shape, row workload.Row) record.Unified {
	u := aggregate.Row(run, sh)
	u.RunID += "/" + row.Config // its own id: readers count each row once
	u.Throughput, u.LatencyP50, u.LatencyP95, u.LatencyP99 = row.Throughput, row.LatencyP50, row.LatencyP95, row.LatencyP99
	u.SuccessRate, u.DurationSeconds = row.SuccessRate, row.DurationSeconds
	if row.Primary != nil {
		aggregate.SetPrimary(&u, *row.Primary)
	}
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
