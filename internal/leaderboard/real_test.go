package leaderboard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/record"
)

// realTree builds a results tree from the report's fixture runs (real
// quick runs): each run.json under OUT/<q>/<id>/ and its unified row,
// plus a full-scale variant of the Q2 runs (quick: false, another
// count) and a rerun of one Q2 seed (the same sample again).
func realTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	var rows []record.Unified
	add := func(run *record.Run) {
		dir := filepath.Join(root, strings.ToLower(run.Workload), run.RunID)
		os.MkdirAll(dir, 0o755)
		b, _ := json.Marshal(run)
		os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
		rows = append(rows, aggregate.Row(run, aggregate.Shape{Nodes: 1, Parallelism: 2}))
	}
	files, _ := filepath.Glob(filepath.Join("..", "report", "testdata", "quick", "*", "*", "run.json"))
	if len(files) < 10 {
		t.Fatalf("%d fixture runs, want the report's quick fixtures", len(files))
	}
	for _, f := range files {
		run, err := record.ReadRun(f)
		if err != nil {
			t.Fatal(err)
		}
		add(run)
		if strings.Contains(f, "compare") {
			full := *run
			full.RunID, full.ConfigHash = strings.Replace(run.RunID, "q2-", "q2full-", 1), "full"+run.ConfigHash[4:]
			var cfg map[string]any
			json.Unmarshal(run.RunConfig, &cfg)
			cfg["quick"] = false
			cfg["q2"].(map[string]any)["schedule"].(map[string]any)["count"] = 1500
			full.RunConfig, _ = json.Marshal(cfg)
			add(&full)
		}
	}
	dup := rows[len(rows)-1]
	dup.RunID += "-again"
	rows = append(rows, dup)
	var buf bytes.Buffer
	for _, r := range rows {
		b, _ := json.Marshal(r)
		buf.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(root, record.UnifiedJSONL), buf.Bytes(), 0o644)
	return root
}

// TestLeaderboardOfRealRuns: a section per Q with its primary metric,
// quick and full told apart by their labels, fixed-point mean ± CI, the
// rerun of a seed flagged and not averaged.
func TestLeaderboardOfRealRuns(t *testing.T) {
	c, err := Collect(realTree(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := b.Write(&buf, "markdown"); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"## Q1 PipelineChain", "## Q8 RecoverySoak", "Primary metric: best_critical_ttft_p99_ms (ms, lower is better)",
		"| Q2 quick schedule.count=150 |", "| Q2 full schedule.count=1500 |", " 2 † |", "same sample again",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("leaderboard lacks %q:\n%s", want, md)
		}
	}
	if m := regexp.MustCompile(`\de[+-]\d|NaN|Inf`).FindString(md); m != "" {
		t.Errorf("leaderboard holds %q", m)
	}
	var q2 *Entry
	for i, e := range b.Entries {
		if e.Label == "Q2 quick schedule.count=150" && len(e.Duplicates) == 1 {
			q2 = &b.Entries[i]
		}
	}
	// The quick Q2 runs: the single run (seed 42) and three repetitions
	// (seeds 42, 43, 44; 43 invalid, listed apart): seed 42 twice is one
	// sample, flagged.
	if q2 == nil || q2.Reps != 2 || q2.Primary == nil || q2.Primary.N != 2 || q2.Primary.Interval == nil {
		t.Fatalf("Q2 quick entry %+v: want the 2 valid seeds, the rerun flagged, both in the primary's interval", q2)
	}
}
