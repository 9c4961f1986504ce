package calibrate_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/calibrate"
)

var update = flag.Bool("update", false, "rewrite the golden grades in testdata")

// TestGradeGoldenExports grades real exports — each made by the tool
// itself against `sagebench calibrate serve`, with that run's truth log,
// in testdata/<tool>/ — and checks that the grader reproduces the tool's
// own TTFT median within 0.1 ms (the proof the format is read right),
// that every answered request is accounted for, and the whole grade
// against testdata/<tool>/grade.golden.json (-update rewrites it).
func TestGradeGoldenExports(t *testing.T) {
	for _, tool := range []string{"sagebench", "aiperf", "guidellm", "inference-perf", "genai-bench"} {
		t.Run(tool, func(t *testing.T) {
			dir := filepath.Join("testdata", tool)
			f, err := os.Open(filepath.Join(dir, "truth.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			truth, err := calibrate.ReadTruth(f)
			if err != nil {
				t.Fatal(err)
			}
			e, err := calibrate.ReadExport(tool, dir)
			if err != nil {
				t.Fatal(err)
			}
			g := calibrate.GradeExport(e, truth)
			checkGrade(t, g)
			got, _ := json.MarshalIndent(g, "", "  ")
			golden := filepath.Join(dir, "grade.golden.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
				t.Errorf("grade differs from %s (rerun with -update if the change is meant):\n%s", golden, got)
			}
		})
	}
}

func checkGrade(t *testing.T, g calibrate.Grade) {
	t.Helper()
	if g.TruthRequests == 0 || g.Lost != 0 || g.Extra != 0 || g.Reported+g.Failed != g.TruthRequests {
		t.Errorf("requests: %d answered, %d ok, %d failed, %d lost, %d extra", g.TruthRequests, g.Reported, g.Failed, g.Lost, g.Extra)
	}
	for _, m := range g.Metrics {
		if m.Metric != "TTFT" {
			continue
		}
		if !m.OwnKnown || !m.Reproduced || m.Median-m.Own > 0.1 || m.Own-m.Median > 0.1 {
			t.Errorf("TTFT: own median %.4f (known %v), recomputed %.4f: not within 0.1 ms", m.Own, m.OwnKnown, m.Median)
		}
		return
	}
	t.Error("no TTFT graded")
}
