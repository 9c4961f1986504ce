package run

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/workload/q5"
)

// TestWriteAggregate: three repetitions of Q5 — recovered after 4 s,
// never recovered, and an invalid one that recovered after 30 s — give
// aggregate.json, summary.md and one unified row marked as the
// aggregate; the primary is a bound [4 s, ∞): one valid repetition
// measured 4 s and one never recovered (mixed states are not a mean),
// the invalid one left out.
func TestWriteAggregate(t *testing.T) {
	out := t.TempDir()
	s := runconfig.DefaultShared()
	s.OutputDir = out
	r, _, err := runconfig.Resolve(q5.Spec(), s, nil, workloadOverrides())
	if err != nil {
		t.Fatal(err)
	}
	rec := result.Def{Name: "recovery_s", Unit: result.Seconds, Direction: result.Lower}
	res := []Result{
		fakeResult("q5-sage-0-a", 0, rec.Measure(4, 1, ""), true),
		fakeResult("q5-sage-1-b", 1, rec.Never("never back within the bound"), true),
		fakeResult("q5-sage-2-c", 2, rec.Measure(30, 1, ""), false),
	}
	var w bytes.Buffer
	if err := writeAggregate(&w, r, res); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "q5", "agg-q5-sage-*"))
	if len(dirs) != 1 {
		t.Fatalf("aggregate dirs %v", dirs)
	}
	var a aggregate.Aggregate
	b, _ := os.ReadFile(filepath.Join(dirs[0], "aggregate.json"))
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	e, ok := a.Metric("recovery_s")
	if !ok || a.Primary != "recovery_s" || e.State != result.Bound || e.N != 1 || e.Interval == nil || e.Interval[0] != 4 || !math.IsInf(e.Interval[1], 1) ||
		e.Excluded != (aggregate.Excluded{Invalid: 1, Never: 1}) || a.Valid != 2 {
		t.Errorf("aggregate %+v, recovery_s %+v", a, e)
	}
	md, _ := os.ReadFile(filepath.Join(dirs[0], "summary.md"))
	if !strings.Contains(string(md), "**Answer:** Q5 HeteroResilience over 3 repetitions (2 valid): recovery_s ≥ 4.00 s") {
		t.Errorf("summary.md does not lead with the answer:\n%s", md)
	}
	u, _ := os.ReadFile(filepath.Join(out, "unified_results.jsonl"))
	if !strings.Contains(string(u), `"aggregate":true`) || !strings.Contains(string(u), `"primary_state":"bound","primary_lo":4,"primary_hi":null`) || strings.Count(string(u), "\n") != 1 {
		t.Errorf("unified rows:\n%s", u)
	}
	if err := writeAggregate(&w, r, res[:1]); err != nil {
		t.Errorf("one repetition: %v", err)
	}
}

func fakeResult(id string, seed int64, primary result.Metric, valid bool) Result {
	res := result.New("a made-up answer", primary)
	return Result{Run: record.Run{RunID: id, Workload: "Q5", Name: "HeteroResilience", Backend: "sage", Seed: seed, Valid: valid, Result: &res}}
}
