package workloadtest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// CheckRecompute fails t unless the result in dir's run.json is what its
// Q computes again from the directory alone (workload.Recomputer: the
// records, the phases and the effective config of run.json): the same
// answer, primary metric, metrics, events and tables. The runner's own
// additions (run-level metrics, the turns table, target verdicts) are
// left out of the comparison. A Q that cannot recompute is reported
// with t.Log, so that the gap shows in -v output.
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
// the one its run.json recorded; ok is false (and t told) when the Q does
// not implement workload.Recomputer or the run recorded no result.
func Recompute(t *testing.T, dir string) (recorded, res result.Result, ok bool) {
	t.Helper()
	run, err := record.ReadRun(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	spec, err := catalog.Lookup(run.Workload)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	rec, err := workload.ReadRecords(dir, spec.Files)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	w, err := workload.Configure(spec, rec.Run)
	if err != nil {
		t.Fatalf("%s: configuring %s from run.json: %v", dir, spec.ID, err)
	}
	rc, ok := w.(workload.Recomputer)
	if !ok {
		t.Logf("%s: %s does not recompute its result from the files", dir, spec.ID)
		return recorded, res, false
	}
	if rec.Run.Result == nil {
		t.Errorf("%s: run.json has no result to recompute", dir)
		return recorded, res, false
	}
	res, err = rc.Recompute(rec)
	if err != nil {
		t.Fatalf("%s: recomputing %s: %v", dir, spec.ID, err)
	}
	return *rec.Run.Result, res, true
}

// ResultDiff describes how got (recomputed) differs from recorded, on
// what got defines: "" when they agree.
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
