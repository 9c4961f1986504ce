package run

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/presenter"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
)

// Confidence is the confidence level of the intervals over repetitions.
const Confidence = 0.95

// writeAggregate writes, for two or more repetitions, aggregate.json and
// summary.md into OUTPUT_DIR/<q>/agg-<run id>/, appends one unified row
// marked metadata.aggregate, and prints the section.
func writeAggregate(w io.Writer, r runconfig.Resolved, results []Result) error {
	if len(results) < 2 {
		return nil
	}
	runs := make([]record.Run, len(results))
	for i, res := range results {
		runs[i] = res.Run
	}
	a := aggregate.Runs(runs, Confidence)
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
	presenter.Aggregate(&md, a, true)
	if err := record.WriteFileAtomic(filepath.Join(dir, "summary.md"), md.Bytes()); err != nil {
		return err
	}
	if w != nil {
		fmt.Fprintf(w, "\n%s %s over %d repetitions (valid %d/%d); aggregate: %s\n", a.Workload, a.Name, a.Repetitions, a.Valid, a.Repetitions, dir)
		presenter.Aggregate(w, a, false)
	}
	last := results[len(results)-1].Run
	return record.AppendUnified(r.Shared.OutputDir, aggregate.AggregateRow(a, &last, unifiedShape(r), id))
}
