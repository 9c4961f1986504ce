package run

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// lateWorkload records one request in time and another from a hit that
// outlives Run (as a hit that ignores its cancelled context does).
type lateWorkload struct {
	workload.Workload
	release, done chan struct{}
}

func (w *lateWorkload) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	env.Record(record.Request{ID: "in-time", Kind: "request", OK: true})
	go func() {
		defer close(w.done)
		<-w.release
		env.Record(record.Request{ID: "late", Kind: "request", OK: true})
	}()
	return workload.Outcome{}, nil
}

// TestDriveDropsRequestsAfterRun: a request recorded after the workload's
// Run returned is in neither requests.jsonl nor the summary, so the two
// always agree.
func TestDriveDropsRequestsAfterRun(t *testing.T) {
	dir := t.TempDir()
	wl := &lateWorkload{release: make(chan struct{}), done: make(chan struct{})}
	run := &record.Run{StartedAt: time.Now()}
	_, col, err := (&Runner{}).drive(context.Background(), runconfig.Resolved{Workload: wl, Shared: runconfig.DefaultShared()}, nil, run, dir)
	if err != nil {
		t.Fatal(err)
	}
	close(wl.release)
	<-wl.done
	sum, _ := col.Summarize(nil, summary.Validity{})
	lines := readRequests(t, dir)
	if sum.Requests != 1 || len(lines) != 1 || lines[0].ID != "in-time" {
		t.Errorf("summary counts %d requests, %s holds %d; want the one recorded in time in both",
			sum.Requests, filepath.Join(dir, "requests.jsonl"), len(lines))
	}
}

// envWorkload keeps the Env its Run was given.
type envWorkload struct {
	workload.Workload
	env workload.Env
}

func (w *envWorkload) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	w.env = *env
	return workload.Outcome{}, nil
}

// TestDrivePassesThePacer: the run's pacer reaches the workload's drivers
// as Env.FineGap (precise: every arrival waited for precisely).
func TestDrivePassesThePacer(t *testing.T) {
	for pacer, want := range map[string]time.Duration{"": 0, load.PacerEfficient: 0, load.PacerPrecise: -1} {
		wl := &envWorkload{}
		s := runconfig.DefaultShared()
		s.Pacer = pacer
		if _, _, err := (&Runner{}).drive(context.Background(), runconfig.Resolved{Workload: wl, Shared: s}, nil, &record.Run{StartedAt: time.Now()}, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if wl.env.FineGap != want {
			t.Errorf("pacer %q: Env.FineGap %v, want %v", pacer, wl.env.FineGap, want)
		}
	}
}
