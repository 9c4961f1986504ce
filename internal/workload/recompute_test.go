package workload_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// fakeConfig is the config of fake (section qx).
type fakeConfig struct {
	Label string `yaml:"label" json:"label"`
}

func (*fakeConfig) Validate() error                      { return nil }
func (*fakeConfig) Override(workload.Overrides) []string { return nil }
func (*fake) Plan(int64) (workload.Plan, error)          { return workload.Plan{}, nil }
func (*fake) Run(context.Context, *workload.Env) (workload.Outcome, error) {
	return workload.Outcome{}, nil
}

// fake is a Q that does not implement Recomputer; fakeRecomputer one
// whose result is its label's answer and the number of requests.
type fake struct{ cfg *fakeConfig }

func (f *fake) Config() workload.Config { return f.cfg }

type fakeRecomputer struct{ fake }

var defN = result.Def{Name: "n", Unit: result.Count, Direction: result.Higher}

func (f *fakeRecomputer) Recompute(rec workload.Records) (result.Result, error) {
	if len(rec.Requests) == 0 {
		return result.Result{}, errors.New("no requests")
	}
	return result.New(f.cfg.Label+" answer", defN.Measure(float64(len(rec.Requests)), len(rec.Requests), "")), nil
}

// TestRecomputeDir: a run directory recomputes through its Q (configured
// from run_config), a difference shows in ResultDiff, and a Q that does
// not recompute, a run without a result or records the Q refuses are
// errors naming why.
func TestRecomputeDir(t *testing.T) {
	recorded := result.New("x answer", defN.Measure(2, 2, ""))
	spec := func(recompute bool) workload.Spec {
		return workload.Spec{ID: "QX", New: func(bool) workload.Workload {
			if recompute {
				return &fakeRecomputer{fake{&fakeConfig{}}}
			}
			return &fake{&fakeConfig{}}
		}}
	}
	tests := []struct {
		name      string
		recompute bool
		result    *result.Result
		requests  int
		wantErr   string // "" = no error
		wantDiff  string // "" = identical
	}{
		{"identical", true, &recorded, 2, "", ""},
		{"a request more", true, &recorded, 3, "", "primary"},
		{"not a recomputer", false, &recorded, 2, "does not recompute", ""},
		{"no result", true, nil, 2, "no result", ""},
		{"refused", true, &recorded, 0, "recomputing QX: no requests", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			run := record.Run{RunID: "qx-1", Workload: "QX", RunConfig: []byte(`{"qx":{"label":"x"}}`), Result: tc.result}
			b, err := json.Marshal(&run)
			if err != nil {
				t.Fatal(err)
			}
			var lines strings.Builder
			for i := range tc.requests {
				r := record.Request{ID: "r" + string(rune('a'+i)), Kind: "request"}
				l, err := record.AppendRequest(nil, &r)
				if err != nil {
					t.Fatal(err)
				}
				lines.Write(append(l, '\n'))
			}
			write(t, filepath.Join(dir, "run.json"), b)
			write(t, filepath.Join(dir, "requests.jsonl"), []byte(lines.String()))
			rec, got, err := workload.RecomputeDir(dir, func(string) (workload.Spec, error) { return spec(tc.recompute), nil })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want %q", err, tc.wantErr)
				}
				if tc.name == "not a recomputer" && !errors.Is(err, workload.ErrNotRecomputable) {
					t.Errorf("error %v is not ErrNotRecomputable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := workload.ResultDiff(rec, got); (d == "") != (tc.wantDiff == "") || !strings.Contains(d, tc.wantDiff) {
				t.Errorf("diff %q; want %q", d, tc.wantDiff)
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadRecordsBounded: a Q record file is read through a bound, not by
// its reported size: one that never ends (a link to /dev/zero, whose size
// is 0) is an error after the bound, never read whole.
func TestReadRecordsBounded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"run_id":"r","workload":"Q1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "requests.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "pipeline.json")); err != nil {
		t.Skip(err)
	}
	if _, err := workload.ReadRecords(dir, []string{"pipeline.json"}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("ReadRecords of an endless file: %v", err)
	}
}
