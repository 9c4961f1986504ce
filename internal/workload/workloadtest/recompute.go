package workloadtest

import (
	"errors"
	"testing"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// CheckRecompute fails t unless the result in dir's run.json is what its
// Q computes again from the directory alone (workload.Recomputer: the
// records, the phases and the effective config of run.json): the same
// answer, primary metric, metrics, events and tables. The runner's own
// additions (run-level metrics, the turns table, target verdicts) are
// left out of the comparison. Every Q of the catalog recomputes: one
// that does not fails the check.
func CheckRecompute(t *testing.T, dir string) {
	t.Helper()
	recorded, got, ok := Recompute(t, dir)
	if !ok {
		return
	}
	if diff := ResultDiff(recorded, got); diff != "" {
		t.Errorf("%s: the result recomputed from the files differs from run.json's: %s", dir, diff)
	}
}

// Recompute computes the result of the run in dir from its files beside
// the one its run.json recorded (workload.RecomputeDir); ok is false
// (and t failed) when the Q does not implement workload.Recomputer or
// the run recorded no result; records that do not hold the run are
// fatal.
func Recompute(t *testing.T, dir string) (recorded, res result.Result, ok bool) {
	t.Helper()
	recorded, res, err := workload.RecomputeDir(dir, catalog.Lookup)
	switch {
	case errors.Is(err, workload.ErrNotRecomputable):
		t.Errorf("%s: %v", dir, err)
		return recorded, res, false
	case err != nil:
		t.Fatalf("%s: %v", dir, err)
	}
	return recorded, res, true
}

// ResultDiff describes how got (recomputed) differs from recorded, on
// what got defines: "" when they agree (workload.ResultDiff).
func ResultDiff(recorded, got result.Result) string { return workload.ResultDiff(recorded, got) }
