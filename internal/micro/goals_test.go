package micro

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWriteGoals: the goal lines fail when the numbers are bad, and say
// "not measured" for a shape without results.
func TestWriteGoals(t *testing.T) {
	var in strings.Builder
	line := func(name string, ns, cpu float64, extra string) {
		fmt.Fprintf(&in, "Benchmark%s-2 100 %.0f ns/op %.0f cpu-ns/op %s 0 B/op 0 allocs/op\n", name, ns, cpu, extra)
	}
	for _, ns := range []float64{1, 1.02} { // two repetitions
		// 512×8192: auto (2 workers) 3 % above the best; FedAvg 1.15× the floor.
		line("Aggregate/clients=512/dim=8192/workers=1", 400e3*ns, 400e3, "")
		line("Aggregate/clients=512/dim=8192/workers=2", 300e3*ns, 600e3, "")
		line("Aggregate/clients=512/dim=8192/workers=auto", 309e3*ns, 618e3, "2 workers")
		line("MemoryFloor/bytes=16777216/workers=2", 261e3*ns, 522e3, "")
		// 256×8192: auto picked 1 worker, 1.3× the best; FedAvg 1.4× the floor.
		line("Aggregate/clients=256/dim=8192/workers=1", 130e3*ns, 130e3, "")
		line("Aggregate/clients=256/dim=8192/workers=2", 100e3*ns, 200e3, "")
		line("Aggregate/clients=256/dim=8192/workers=auto", 130e3*ns, 130e3, "1 workers")
		line("MemoryFloor/bytes=8388608/workers=2", 71e3*ns, 142e3, "")
	}
	var out bytes.Buffer
	failed, err := WriteGoals(&out, strings.NewReader(in.String()), "in")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"auto/best clients=512/dim=8192: 1.000 (goal <= 1.05) PASS; auto chose 2, best fixed 2; auto's own time ÷ best 1.030, ÷ its fixed count in the same pass 1.030 (median of 2)",
		"auto/best clients=256/dim=8192: 1.300 (goal <= 1.05) FAIL; auto chose 1, best fixed 2; auto's own time ÷ best 1.300, ÷ its fixed count in the same pass 1.000 (median of 2)",
		"auto/overhead: not measured: 4 paired passes, want 6 (goal: 95% upper bound <= 1.05)",
		"auto/best clients=32/dim=2048: not measured (goal <= 1.05)",
		"best/floor clients=512/dim=8192: 1.149 wall, 1.149 cpu, 2 workers (goal <= 1.20) PASS",
		"best/floor clients=256/dim=8192: 1.408 wall, 1.408 cpu, 2 workers (goal <= 1.20) FAIL",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("goals lack %q:\n%s", want, out.String())
		}
	}
	if failed != 10+1+1+1 { // 10 shapes not measured, one auto, the overhead and one floor failure
		t.Errorf("%d failed, want 13:\n%s", failed, out.String())
	}
	if _, err := WriteGoals(&out, strings.NewReader("BenchmarkCodec/x 1 1 ns/op\n"), "in"); !errors.Is(err, ErrNoResults) {
		t.Errorf("no aggregate results: %v", err)
	}
}

// TestAutoGoalJudgesTheChoice: Auto's goal judges the count it chose
// against the best fixed count (the worst of the counts it chose over the
// passes), and its overhead over all shapes from paired passes; noise
// between passes of the same code fails neither.
func TestAutoGoalJudgesTheChoice(t *testing.T) {
	type pass struct{ w1, w2, auto, workers float64 }
	tests := []struct {
		name      string
		passes    []pass
		wantShape string
		wantOver  string
	}{
		{"same code, noisy passes: the choice passes; 7 noisy pairs do not bound the overhead",
			[]pass{{400, 300, 330, 2}, {400, 300, 290, 2}, {420, 330, 310, 2}, {380, 280, 300, 2}, {400, 300, 300, 2}, {400, 300, 297, 2}, {410, 310, 320, 2}},
			"auto/best clients=512/dim=8192: 1.000 (goal <= 1.05) PASS; auto chose 2, best fixed 2",
			"median 1.000 of 7 pairs, 95% interval 0.939-1.100 (goal: upper bound <= 1.05) FAIL"},
		{"auto adds 10 % in every pass: overhead fails",
			[]pass{{400, 300, 330, 2}, {400, 300, 330, 2}, {420, 320, 352, 2}, {380, 280, 308, 2}, {400, 300, 330, 2}, {400, 300, 330, 2}},
			"auto/best clients=512/dim=8192: 1.000 (goal <= 1.05) PASS",
			"median 1.100 of 6 pairs, 95% interval 1.100-1.100 (goal: upper bound <= 1.05) FAIL"},
		{"one pass chose the slower count: the shape fails",
			[]pass{{400, 300, 400, 1}, {400, 300, 300, 2}, {400, 300, 300, 2}, {400, 300, 300, 2}, {400, 300, 300, 2}, {400, 300, 300, 2}},
			"auto/best clients=512/dim=8192: 1.333 (goal <= 1.05) FAIL; auto chose 1,2,2,2,2,2, best fixed 2",
			"median 1.000 of 6 pairs, 95% interval 1.000-1.000 (goal: upper bound <= 1.05) PASS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in strings.Builder
			for _, p := range tt.passes {
				fmt.Fprintf(&in, "BenchmarkAggregate/clients=512/dim=8192/workers=1-2 100 %.0f ns/op\n", p.w1*1e3)
				fmt.Fprintf(&in, "BenchmarkAggregate/clients=512/dim=8192/workers=2-2 100 %.0f ns/op\n", p.w2*1e3)
				fmt.Fprintf(&in, "BenchmarkAggregate/clients=512/dim=8192/workers=auto-2 100 %.0f ns/op %.0f workers\n", p.auto*1e3, p.workers)
			}
			var out bytes.Buffer
			if _, err := WriteGoals(&out, strings.NewReader(in.String()), "in"); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{tt.wantShape, "auto/overhead: auto ÷ the fixed count it chose, same pass: " + tt.wantOver} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("goals lack %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// TestMedianRank: the ranks of the exact 95 % interval of a median, as
// tabulated (e.g. Conover, Practical Nonparametric Statistics, table A3):
// n = 6 → [x1, x6], n = 10 → [x2, x9], n = 20 → [x6, x15], n = 60 → [x22, x39].
func TestMedianRank(t *testing.T) {
	for n, want := range map[int]int{5: 0, 6: 1, 8: 1, 9: 2, 10: 2, 20: 6, 60: 22} {
		if got := medianRank(n); got != want {
			t.Errorf("medianRank(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestPairAutoByPass: auto pairs with its count's run of the same pass;
// with every case run N times in a row (--count N), only the first auto
// run has a partner, and it is not paired with a run of another pass.
func TestPairAutoByPass(t *testing.T) {
	line := func(w string, ns float64, extra string) string {
		return fmt.Sprintf("BenchmarkAggregate/clients=512/dim=8192/workers=%s-2 100 %.0f ns/op %s\n", w, ns, extra)
	}
	var passes, inARow strings.Builder
	for p := range 3 {
		passes.WriteString(line("2", float64(100+p), "") + line("auto", float64(110+p), "2 workers"))
	}
	for p := range 3 {
		inARow.WriteString(line("2", float64(100+p), ""))
	}
	for p := range 3 {
		inARow.WriteString(line("auto", float64(110+p), "2 workers"))
	}
	for _, tc := range []struct {
		name, in string
		want     []float64
	}{
		{"one run of every case per pass", passes.String(), []float64{110.0 / 100, 111.0 / 101, 112.0 / 102}},
		{"every case three times in a row", inARow.String(), []float64{110.0 / 102}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pairAuto([]byte(tc.in), "in")
			if err != nil {
				t.Fatal(err)
			}
			if g := got["clients=512/dim=8192"]; fmt.Sprintf("%.4f", g) != fmt.Sprintf("%.4f", tc.want) {
				t.Errorf("pairs %.4f, want %.4f", g, tc.want)
			}
		})
	}
}

// TestAutoGoalWithoutItsCount: where the count auto chose has no fixed
// run (3 workers), or the file has no "workers" metric, auto's own time
// is judged, and the line says so.
func TestAutoGoalWithoutItsCount(t *testing.T) {
	for _, tc := range []struct{ name, extra, want string }{
		{"a count without a fixed run", "3 workers", "auto/best clients=512/dim=8192: 1.040 (goal <= 1.05) PASS; auto's own time ÷ best fixed 2 (its choice cannot be judged"},
		{"no workers metric", "", "auto/best clients=512/dim=8192: 1.040 (goal <= 1.05) PASS; auto's own time ÷ best fixed 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "BenchmarkAggregate/clients=512/dim=8192/workers=1-2 100 400000 ns/op\n" +
				"BenchmarkAggregate/clients=512/dim=8192/workers=2-2 100 300000 ns/op\n" +
				"BenchmarkAggregate/clients=512/dim=8192/workers=auto-2 100 312000 ns/op " + tc.extra + "\n"
			var out bytes.Buffer
			if _, err := WriteGoals(&out, strings.NewReader(in), "in"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("goals lack %q:\n%s", tc.want, out.String())
			}
		})
	}
}

// TestOverheadIntervalCoverage: against pairs of known truth (auto ÷ its
// count with a true median of exactly 1, skewed noise as on the VM) the
// interval overheadGoal prints holds 1 at least 95 % of the time, at the
// run's 60 pairs and at a short run's 8; an auto 10 % slower fails.
func TestOverheadIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 39))
	draw := func(n int, scale float64) []float64 {
		p := make([]float64, n)
		for i := range p {
			p[i] = scale * math.Exp(0.08*rng.NormFloat64()) // median exactly scale
		}
		return p
	}
	for _, n := range []int{8, 60} {
		held := 0
		const trials = 2000
		for range trials {
			var out bytes.Buffer
			pairs := draw(n, 1)
			overheadGoal(&out, pairs)
			var med, lo, hi float64
			var m int
			if _, err := fmt.Sscanf(out.String()[strings.Index(out.String(), "median"):], "median %f of %d pairs, 95%% interval %f-%f", &med, &m, &lo, &hi); err != nil {
				t.Fatalf("%v: %q", err, out.String())
			}
			if lo <= 1 && 1 <= hi {
				held++
			}
		}
		if cov := float64(held) / trials; cov < 0.94 { // ≥ 95 % less three standard errors of 2000 trials
			t.Errorf("n=%d: the interval held the true median in %.3f of %d runs, want >= 0.95", n, cov, trials)
		}
	}
	var out bytes.Buffer
	if overheadGoal(&out, draw(60, 1.10)) != 1 {
		t.Errorf("an auto 10 %% slower than its count passed: %s", out.String())
	}
}
