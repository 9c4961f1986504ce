package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/strictyaml"
	"github.com/sagebench/sagebench/internal/summary"
)

// Records are what a finished run's directory holds, read back: run.json
// (its phases on the run clock, its effective config), requests.jsonl in
// file order and the Q's own record files (Spec.Files, e.g. events.jsonl).
// A Q's result is a function of these alone.
type Records struct {
	Run      *record.Run
	Phases   []summary.Phase   // run.json phases, back on the run clock
	Requests []record.Request  // requests.jsonl, in file order
	Files    map[string][]byte // the Q's record files present, by name
}

// Recomputer is implemented by a workload whose result can be computed
// again from its run's records: Recompute, on a workload configured as
// the run was (Configure), returns the result its Run reported, before
// the runner added the run-level metrics and the target verdicts.
type Recomputer interface {
	Recompute(rec Records) (result.Result, error)
}

// maxRecordFile bounds a Q record file read back (events, windows).
const maxRecordFile = 64 << 20

// ReadRecords reads the run directory dir; files are the Q's own record
// file names (Spec.Files), read when present.
func ReadRecords(dir string, files []string) (Records, error) {
	run, err := record.ReadRun(filepath.Join(dir, "run.json"))
	if err != nil {
		return Records{}, err
	}
	rec := Records{Run: run, Phases: PhasesOf(run.Phases), Files: map[string][]byte{}}
	err = record.ReadRequestsFile(filepath.Join(dir, "requests.jsonl"), func(_ int, r record.Request) {
		rec.Requests = append(rec.Requests, r)
	})
	if err != nil {
		return Records{}, err
	}
	for _, name := range files {
		b, err := record.ReadBounded(filepath.Join(dir, name), maxRecordFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Records{}, err
		}
		rec.Files[name] = b
	}
	return rec, nil
}

// PhasesOf turns run.json's phases back into the workload's phases: the
// milliseconds there are exact nanoseconds (float64 holds them to 2⁵³ ns).
func PhasesOf(ps []record.Phase) []summary.Phase {
	out := make([]summary.Phase, 0, len(ps))
	for _, p := range ps {
		out = append(out, summary.Phase{Name: p.Name, Start: fromMillis(p.StartMs), End: fromMillis(p.EndMs),
			Scheduled: p.Scheduled, ScheduleSpan: time.Duration(math.Round(p.ScheduleSpanS * 1e9)),
			Interrupted: p.Interrupted, ClosedLoop: p.ClosedLoop})
	}
	return out
}

func fromMillis(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// Configure returns spec's workload configured as the run was: its scale
// (run_config "quick") and its section of run_config decoded strictly
// over that scale's defaults.
func Configure(spec Spec, run *record.Run) (Workload, error) {
	var rc map[string]any
	if err := yaml.Unmarshal(run.RunConfig, &rc); err != nil {
		return nil, fmt.Errorf("run_config: %w", err)
	}
	quick, _ := rc["quick"].(bool)
	w := spec.New(quick)
	sec, ok := rc[spec.Section()]
	if !ok {
		return w, nil
	}
	b, err := yaml.Marshal(sec)
	if err != nil {
		return nil, fmt.Errorf("run_config %s: %w", spec.Section(), err)
	}
	if err := strictyaml.Unmarshal(b, w.Config()); err != nil {
		return nil, fmt.Errorf("run_config %s: %w", spec.Section(), err)
	}
	return w, nil
}
