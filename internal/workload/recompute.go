package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// ErrNotRecomputable is RecomputeDir's error for a Q that does not
// implement Recomputer.
var ErrNotRecomputable = errors.New("the Q does not recompute its result from the files")

// RecomputeDir computes the result of the run in dir again from its
// files (ReadRecords, Configure, Recomputer) beside the one its run.json
// recorded; lookup finds the run's Q by run.json's workload (the catalog's
// Lookup). An error names what is missing or wrong: a run without a
// result, a Q that does not recompute (ErrNotRecomputable), records that
// do not hold the run.
func RecomputeDir(dir string, lookup func(string) (Spec, error)) (recorded, got result.Result, err error) {
	run, err := record.ReadRun(filepath.Join(dir, "run.json"))
	if err != nil {
		return recorded, got, err
	}
	spec, err := lookup(run.Workload)
	if err != nil {
		return recorded, got, err
	}
	rec, err := ReadRecords(dir, spec.Files)
	if err != nil {
		return recorded, got, err
	}
	w, err := Configure(spec, rec.Run)
	if err != nil {
		return recorded, got, fmt.Errorf("configuring %s from run.json: %w", spec.ID, err)
	}
	rc, ok := w.(Recomputer)
	if !ok {
		return recorded, got, fmt.Errorf("%s: %w", spec.ID, ErrNotRecomputable)
	}
	if rec.Run.Result == nil {
		return recorded, got, errors.New("run.json has no result to recompute")
	}
	got, err = rc.Recompute(rec)
	if err != nil {
		return recorded, got, fmt.Errorf("recomputing %s: %w", spec.ID, err)
	}
	return *rec.Run.Result, got, nil
}

// ResultDiff describes how got (recomputed) differs from recorded, on
// what got defines: "" when they agree. The runner's own additions to
// recorded (run-level metrics, the turns table, target verdicts) are
// not in got and so not compared.
func ResultDiff(recorded, got result.Result) string {
	if got.Answer != recorded.Answer {
		return "answer " + quote(got.Answer) + ", recorded " + quote(recorded.Answer)
	}
	if d := jsonDiff("primary", got.Primary, recorded.Primary); d != "" {
		return d
	}
	if d := jsonDiff("events", got.Events, recorded.Events); d != "" {
		return d
	}
	for _, m := range got.Metrics {
		r, ok := recorded.Metric(m.Name)
		if !ok {
			return "metric " + m.Name + " is not in run.json"
		}
		if d := jsonDiff("metric "+m.Name, m, r); d != "" {
			return d
		}
	}
	for _, tb := range got.Tables {
		if d := jsonDiff("table "+tb.Key, tb, tableOf(recorded, tb.Key)); d != "" {
			return d
		}
	}
	return ""
}

func tableOf(r result.Result, key string) *result.Table {
	for i := range r.Tables {
		if r.Tables[i].Key == key {
			return &r.Tables[i]
		}
	}
	return nil
}

func jsonDiff(what string, got, recorded any) string {
	g, _ := json.Marshal(got)
	r, _ := json.Marshal(recorded)
	if string(g) != string(r) {
		return what + ": recomputed " + string(g) + "\n  run.json   " + string(r)
	}
	return ""
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
