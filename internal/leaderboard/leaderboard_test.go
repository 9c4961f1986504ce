package leaderboard

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func board(t *testing.T) *Board {
	t.Helper()
	c, err := Collect(filepath.Join("testdata", "results"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuild(t *testing.T) {
	b := board(t)
	if b.Duplicates != 1 || len(b.Problems) != 1 || !strings.Contains(b.Problems[0], "unified_results.jsonl:4") {
		t.Errorf("duplicates %d, problems %v: want 1 duplicate (s1 twice) and line 4 of b unreadable", b.Duplicates, b.Problems)
	}
	if len(b.Entries) != 6 || b.Aggregates != 1 {
		t.Fatalf("%d entries, %d aggregate rows: want Q1 sage, Q1 ray, Q2 sage, Q2 ray, Q4 sage engines=1 and engines=2, and the aggregate row left out", len(b.Entries), b.Aggregates)
	}
	if q4 := b.Entries[4]; q4.Config != "engines=1" || q4.Reps != 2 || math.Abs(*q4.Values["throughput"].Mean-math.Sqrt(110)) > 1e-9 {
		t.Errorf("entry %+v: want Q4 engines=1 over 2 repetitions, geometric mean √(10·11)", q4)
	}
	q2 := b.Entries[2]
	if q2.Workload != "Q2" || q2.Backend != "sage" || q2.Reps != 3 || q2.Values["throughput"].Interval == nil {
		t.Errorf("entry %+v: want Q2 sage first (highest throughput) with 3 reps and an interval", q2)
	}
	if tp := *q2.Values["throughput"].Mean; tp < 100.2 || tp > 100.3 {
		t.Errorf("Q2 sage mean throughput %v: the invalid run (300 req/s) must not be averaged in", tp)
	}
	if p := q2.Primary; p == nil || p.Name != "best_critical_ttft_p99_ms" || math.Abs(*p.Mean-102) > 0.1 || p.Direction != "lower" {
		t.Errorf("Q2 sage primary %+v: want best_critical_ttft_p99_ms, geometric mean ≈ 102 ms", p)
	}
	if len(b.Refused) != 1 || !strings.Contains(b.Refused[0], "Q1 nodes=1: ray runs (workload_hash w1full) and sage runs (workload_hash w1quick) ran different workloads and are not compared") {
		t.Errorf("refused %q: want Q1's sage and ray runs of different workloads refused, naming both hashes", b.Refused)
	}
	if len(b.Invalid) != 2 || b.Invalid[0].RunID != "bad1" || b.Invalid[1].RunID != "nometa" {
		t.Errorf("invalid %+v: want bad1 and nometa apart", b.Invalid)
	}
	if len(b.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want ray vs sage on Q2", len(b.Comparisons))
	}
	c := b.Comparisons[0]
	tp := c.Metrics[0]
	if c.Base != "ray" || c.Other != "sage" || len(c.Seeds) != 3 || !tp.Significant || tp.Better != "sage" {
		t.Errorf("comparison %+v / %+v: want sage significantly better on throughput over seeds 1-3", c, tp)
	}
	if p99 := c.Metrics[3]; p99.Metric != "latency_p99" || p99.Better != "sage" {
		t.Errorf("p99 %+v: lower is better, want sage", p99)
	}
}

func TestWriteGolden(t *testing.T) {
	b := board(t)
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := b.Write(&buf, format); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "leaderboard."+format+".golden")
			if *update {
				os.WriteFile(golden, buf.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("%s output differs from %s:\n%s", format, golden, got)
			}
		})
	}
	if err := b.Write(&bytes.Buffer{}, "xml"); err == nil {
		t.Error("Write accepted xml")
	}
}

func TestCollectErrors(t *testing.T) {
	tests := []struct {
		name, root, want string
	}{
		{"missing", "testdata/nope", "results:"},
		{"no files", t.TempDir(), "holds no unified_results.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Collect(tt.root); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Collect(%s) = %v, want an error containing %q", tt.root, err, tt.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{Confidence: 1}, {Alpha: -0.1}, {Confidence: 1.5}} {
		if err := o.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted", o)
		}
	}
}
