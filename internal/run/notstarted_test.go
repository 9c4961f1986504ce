package run

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// failingWorkload fails its Run with err, sending nothing.
type failingWorkload struct{ err error }

type noConfig struct{}

func (noConfig) Validate() error                                { return nil }
func (noConfig) Override(workload.Overrides) (ignored []string) { return nil }

func (w failingWorkload) Config() workload.Config           { return noConfig{} }
func (w failingWorkload) Plan(int64) (workload.Plan, error) { return workload.Plan{}, nil }
func (w failingWorkload) Run(context.Context, *workload.Env) (workload.Outcome, error) {
	return workload.Outcome{}, w.err
}

// TestRunThatNeverStartedLeavesNoDirectory: a repetition whose workload
// fails with a NotStartedError (its distributed runtime never started)
// leaves no run directory; any other failure keeps the directory, whose
// run.json says "complete": false.
func TestRunThatNeverStartedLeavesNoDirectory(t *testing.T) {
	boom := errors.New("connecting to NATS at nats://127.0.0.1:1: no servers")
	for _, tc := range []struct {
		name     string
		err      error
		wantDirs int
	}{
		{"not started", &NotStartedError{Err: boom}, 0},
		{"failed after starting", boom, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			shared := runconfig.DefaultShared()
			shared.OutputDir, shared.Repeat = out, 1
			r := runconfig.Resolved{Spec: workload.Spec{ID: "Q1"}, Workload: failingWorkload{tc.err}, Shared: shared}
			rn := &Runner{Out: io.Discard, Start: target.EmbeddedStack(nil)}
			res, err := rn.Run(context.Background(), r)
			if !errors.Is(err, boom) {
				t.Fatalf("Run: %v, want %v", err, boom)
			}
			dirs, _ := filepath.Glob(filepath.Join(out, "q1", "*"))
			if len(dirs) != tc.wantDirs || len(res) != tc.wantDirs {
				t.Fatalf("run directories %v, results %d; want %d", dirs, len(res), tc.wantDirs)
			}
			if tc.wantDirs == 0 {
				if _, err := os.Stat(filepath.Join(out, "q1")); !os.IsNotExist(err) {
					t.Errorf("the empty experiment directory was left: %v", err)
				}
				return
			}
			run, err := record.ReadRun(filepath.Join(dirs[0], "run.json"))
			if err != nil || run.Complete {
				t.Errorf("run.json: %v; want one that says complete false", err)
			}
		})
	}
}
