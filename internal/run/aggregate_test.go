package run

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/workload/q2"
)

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name                 string
		xs                   []float64
		mean, median, stddev float64
		ciHalf               float64
	}{
		{"one value", []float64{5}, 5, 5, 0, 0},
		{"three", []float64{1, 2, 6}, 3, 2, math.Sqrt(7), 4.303 * math.Sqrt(7) / math.Sqrt(3)},
		{"even count median", []float64{4, 1, 3, 2}, 2.5, 2.5, math.Sqrt(5.0 / 3), 3.182 * math.Sqrt(5.0/3) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := spreadOf(tc.xs)
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if !near(s.Mean, tc.mean) || !near(s.Median, tc.median) || !near(s.Stddev, tc.stddev) ||
				!near(s.CIHigh-s.Mean, tc.ciHalf) || !near(s.Mean-s.CILow, tc.ciHalf) || s.N != len(tc.xs) {
				t.Errorf("spreadOf(%v) = %+v", tc.xs, s)
			}
		})
	}
}

// TestWriteAggregate: two repetitions give aggregate.json, summary.md and
// one unified row marked as the aggregate, with the primary first.
func TestWriteAggregate(t *testing.T) {
	out := t.TempDir()
	s := runconfig.DefaultShared()
	s.OutputDir = out
	r, _, err := runconfig.Resolve(q2.Spec(), s, nil, workloadOverrides())
	if err != nil {
		t.Fatal(err)
	}
	res := []Result{fakeResult("q2-sage-0-a", 10, 0.5, true), fakeResult("q2-sage-1-b", 14, 0.7, false)}
	var w bytes.Buffer
	if err := writeAggregate(&w, r, res); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "q2", "agg-q2-sage-*"))
	if len(dirs) != 1 {
		t.Fatalf("aggregate dirs %v", dirs)
	}
	var a Aggregate
	b, _ := os.ReadFile(filepath.Join(dirs[0], "aggregate.json"))
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if g := a.Metrics["primary:goodput"]; g.Mean != 12 || g.N != 2 || a.Valid != 1 || a.Metrics["fifo.critical_ttft_p99_ms"].Median != 0.6 {
		t.Errorf("aggregate %+v", a)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "summary.md")); err != nil {
		t.Error(err)
	}
	u, _ := os.ReadFile(filepath.Join(out, "unified_results.jsonl"))
	if !strings.Contains(string(u), `"aggregate":true`) || strings.Count(string(u), "\n") != 1 {
		t.Errorf("unified rows:\n%s", u)
	}
	if lines := strings.Split(w.String(), "\n"); len(lines) < 5 || !strings.HasPrefix(lines[4], "| primary:goodput |") {
		t.Errorf("primary is not the first metric:\n%s", w.String())
	}
	if err := writeAggregate(&w, r, res[:1]); err != nil {
		t.Errorf("one repetition: %v", err)
	}
}

func fakeResult(id string, goodput, ttft float64, valid bool) Result {
	return Result{Run: record.Run{RunID: id, Backend: "sage", Valid: valid, Summary: record.Summary{
		Primary: record.Metric{Name: "goodput", Value: goodput, Unit: "req/s"}, Goodput: goodput,
		Extra: map[string]float64{"fifo.critical_ttft_p99_ms": ttft}}}}
}
