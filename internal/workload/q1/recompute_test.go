package q1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestQ1RecomputesFromTheFiles: the result of a run on the embedded
// stack (the stage breakdown, the runtime's overhead and recall@k all
// measured) is computed again from its directory alone, identical; and
// the check can fail: a directory that lost a row of pipeline.json, a
// ground-truth id, a stage line or the file itself recomputes to another
// result or refuses with an error naming what is missing.
func TestQ1RecomputesFromTheFiles(t *testing.T) {
	res := runQ1(t, q1Tiny)
	if res.code != 0 || res.dir == "" {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	recorded, got, err := workload.RecomputeDir(res.dir, catalog.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	if d := workload.ResultDiff(recorded, got); d != "" {
		t.Fatalf("recomputed result differs: %s", d)
	}
	// Not vacuous: what pipeline.json feeds is measured, the table there.
	for _, name := range []string{"recall_at_k", "source_doc_retrieved", "runtime_overhead_p50_ms", "runtime_overhead_queue_p50_ms", "source_lag_p99_ms"} {
		if m, ok := got.Metric(name); !ok || !m.Measured() || m.N != 20 {
			t.Errorf("recomputed %s = %+v; want measured over the 20 transactions", name, m)
		}
	}
	if len(got.Tables) != 1 || len(got.Tables[0].Rows) != 3 {
		t.Errorf("recomputed tables %+v; want the stage breakdown of 3 stages", got.Tables)
	}
	ok := 0
	for _, r := range res.reqs {
		if r.Kind == "txn" && r.OK {
			ok++
		}
	}
	if rows := pipelineRows(t, res.dir); len(rows) != ok {
		t.Errorf("pipeline.json has %d rows for %d successful transactions", len(rows), ok)
	}

	tests := []struct {
		name    string
		tamper  func(t *testing.T, dir string)
		wantErr string // "" = the result differs
		metric  string // …and this metric differs
		cell    string // …or this cell of the stage table
	}{
		{"a row dropped", func(t *testing.T, dir string) {
			editPipeline(t, dir, func(p map[string]any) { rows := p["rows"].([]any); p["rows"] = rows[:len(rows)-1] })
		}, "", "runtime_overhead_p50_ms", ""},
		{"a ground-truth id changed", func(t *testing.T, dir string) {
			editPipeline(t, dir, func(p map[string]any) { p["rows"].([]any)[0].(map[string]any)["exact"].([]any)[0] = -1.0 })
		}, "", "recall_at_k", ""},
		{"a queue time changed", func(t *testing.T, dir string) {
			editPipeline(t, dir, func(p map[string]any) {
				for _, r := range p["rows"].([]any) {
					r.(map[string]any)["queue_ms"].([]any)[1] = 1e4
				}
			})
		}, "", "runtime_overhead_queue_p50_ms", ""},
		{"a stage line's time changed", func(t *testing.T, dir string) {
			editLine(t, filepath.Join(dir, "requests.jsonl"), `"id":"txn-000003/embed"`, func(l string) string {
				return regexp.MustCompile(`"e2e_ms":[0-9.e+-]+`).ReplaceAllString(l, `"e2e_ms":99999`)
			})
		}, "", "", "stage_embed_p99_ms"},
		{"a transaction's lag changed", func(t *testing.T, dir string) {
			editLine(t, filepath.Join(dir, "requests.jsonl"), `"id":"txn-000003",`, func(l string) string {
				return regexp.MustCompile(`"lag_ms":[0-9.e+-]+`).ReplaceAllString(l, `"lag_ms":99999`)
			})
		}, "", "source_lag_p99_ms", ""},
		{"k is not top_k", func(t *testing.T, dir string) {
			editPipeline(t, dir, func(p map[string]any) { p["k"] = 6 })
		}, "k 6, but run_config's q1.top_k is 5", "", ""},
		{"a stage line dropped", func(t *testing.T, dir string) {
			editLines(t, filepath.Join(dir, "requests.jsonl"), `"id":"txn-000003/retrieve"`)
		}, "requests.jsonl has no record of its stage retrieve", "", ""},
		{"pipeline.json missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "pipeline.json")); err != nil {
				t.Fatal(err)
			}
		}, "pipeline.json is missing", "", ""},
		{"pipeline.json with an unknown field", func(t *testing.T, dir string) {
			editPipeline(t, dir, func(p map[string]any) { p["extra"] = 1 })
		}, `unknown field "extra"`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, res.dir)
			tc.tamper(t, dir)
			recorded, got, err := workload.RecomputeDir(dir, catalog.Lookup)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if workload.ResultDiff(recorded, got) == "" {
				t.Fatal("the recomputed result is identical: the check cannot fail")
			}
			if tc.metric != "" {
				r, _ := recorded.Metric(tc.metric)
				g, _ := got.Metric(tc.metric)
				if rb, gb := mustJSON(t, r), mustJSON(t, g); rb == gb {
					t.Errorf("%s recomputed as recorded (%s); want it changed", tc.metric, gb)
				}
			}
			if tc.cell != "" {
				if r, g := mustJSON(t, cellOf(t, recorded, tc.cell)), mustJSON(t, cellOf(t, got, tc.cell)); r == g {
					t.Errorf("the stage table's %s recomputed as recorded (%s); want it changed", tc.cell, g)
				}
			}
		})
	}
}

// copyRun copies a run directory's files into a new one.
func copyRun(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	for _, name := range []string{"run.json", "requests.jsonl", "pipeline.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func pipelineRows(t *testing.T, dir string) []any {
	t.Helper()
	var p map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "pipeline.json"))
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := p["rows"].([]any)
	return rows
}

// editPipeline rewrites dir's pipeline.json through edit.
func editPipeline(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "pipeline.json")
	var p map[string]any
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	if b, err = json.Marshal(p); err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// editLine rewrites the one line of path that contains match.
func editLine(t *testing.T, path, match string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, n := strings.SplitAfter(string(b), "\n"), 0
	for i, l := range lines {
		if strings.Contains(l, match) {
			lines[i], n = edit(l), n+1
		}
	}
	if n != 1 {
		t.Fatalf("%d lines of %s have %s; want 1", n, path, match)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editLines drops the lines of path that contain drop (at least one).
func editLines(t *testing.T, path, drop string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(l, drop) {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(strings.SplitAfter(string(b), "\n")) {
		t.Fatalf("no line of %s has %s", path, drop)
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cellOf is the metric named name in res's tables.
func cellOf(t *testing.T, res result.Result, name string) result.Metric {
	t.Helper()
	for _, tb := range res.Tables {
		for _, row := range tb.Rows {
			for _, c := range row {
				if c.Metric != nil && c.Metric.Name == name {
					return *c.Metric
				}
			}
		}
	}
	t.Fatalf("no cell %s in the tables", name)
	return result.Metric{}
}
