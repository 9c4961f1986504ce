package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/run"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// Measure drives r's workload — its own rate and request mix, resolved
// with the phases cut to a few seconds by the caller — against an exact
// server of cfg, through the same runner, client and records as a run,
// and returns the measurement floor. Nothing is written outside a
// temporary directory, which is removed.
func Measure(ctx context.Context, r runconfig.Resolved, cfg Config) (record.Floor, error) {
	return measure(ctx, r, cfg, 0)
}

// measure is Measure with a delay injected into the client path of every
// request (tests only).
func measure(ctx context.Context, r runconfig.Resolved, cfg Config, inject time.Duration) (record.Floor, error) {
	srv, err := start(cfg, Serve{Models: workload.Models(r.Workload)})
	if err != nil {
		return record.Floor{}, err
	}
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "sagebench-calibrate-")
	if err != nil {
		return record.Floor{}, fmt.Errorf("calibrate: %w", err)
	}
	defer os.RemoveAll(tmp)
	r.Shared.Target = target.Config{URL: srv.URL(), Timeout: r.Shared.Target.Timeout}
	r.Shared.OutputDir, r.Shared.Repeat = tmp, 1
	rn := &run.Runner{Out: io.Discard, Env: record.CollectEnvironment(), InjectDelay: inject}
	res, err := rn.Run(ctx, r)
	if len(res) == 0 {
		if err == nil {
			err = errors.New("no run")
		}
		return record.Floor{}, fmt.Errorf("calibrate: %w", err)
	}
	if err != nil {
		return record.Floor{}, fmt.Errorf("calibrate: %w", err)
	}
	var reqs []record.Request
	if err := record.ReadRequestsFile(filepath.Join(res[0].Dir, "requests.jsonl"), func(_ int, q record.Request) { reqs = append(reqs, q) }); err != nil {
		return record.Floor{}, fmt.Errorf("calibrate: %w", err)
	}
	sum := res[0].Run.Summary
	f := FloorOf(reqs, srv.Config(), sum.TargetRate, sum.DeliveredRate)
	f.Workload, f.ConfigHash, f.LoadAvg1 = r.Spec.ID, r.ConfigHash, res[0].Run.Environment.LoadAvg1
	c := srv.Config()
	f.Source = fmt.Sprintf("%s plan (%.4g req/s, %s) against the exact server (ttft %v, itl %v, embeddings %v)",
		r.Spec.ID, sum.TargetRate, durationOf(sum.DurationSeconds), c.TTFT, c.ITL, c.EmbedLatency)
	return f, nil
}

func durationOf(sec float64) string {
	return (time.Duration(sec * float64(time.Second))).Round(100 * time.Millisecond).String()
}
