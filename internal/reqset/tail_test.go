package reqset_test

import (
	"math"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
)

var ttftDef = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}

// reqs are n requests with TTFT 1..n ms, the first failed ones failing.
func reqs(n, failed int) []record.Request {
	rs := make([]record.Request, n)
	for i := range rs {
		rs[i] = record.Request{OK: i >= failed, TTFTMs: float64(i + 1), FirstToken: 1, E2EMs: float64(i + 1)}
	}
	return rs
}

// TestTailSurvivorBias: failed requests are +∞, not left out: below
// 1 − q failed the quantile is a number, beyond it a bound from the
// slowest answer, with none answered not measurable — never the fast
// quantile of the survivors.
func TestTailSurvivorBias(t *testing.T) {
	tests := []struct {
		name  string
		rs    []record.Request
		state result.State
		value float64 // measured value, or the bound's low end
	}{
		{"none failed", reqs(200, 0), result.Measured, 198},
		{"1 % failed: the quantile moves up, finite", reqs(200, 2), result.Measured, 200},
		{"3 failed: the p99 is a failure, a bound from the 95 % low end (rank 195)", reqs(200, 3), result.Bound, 198},
		{"half failed: +∞, never answered", reqs(200, 100), result.Never, 0},
		{"all failed: +∞, never answered", reqs(10, 10), result.Never, 0},
		{"nothing sent", nil, result.NotMeasurable, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := reqset.TailOf(tc.rs, 0.99, reqset.TTFT).Metric(ttftDef, "nothing sent")
			if m.State != tc.state {
				t.Fatalf("state %s (%+v), want %s", m.State, m, tc.state)
			}
			switch tc.state {
			case result.Measured:
				if m.Value != tc.value {
					t.Errorf("value %v, want %v", m.Value, tc.value)
				}
			case result.Bound:
				if m.Interval[0] != tc.value || !math.IsInf(m.Interval[1], 1) || !strings.Contains(m.Reason, "3 of 200 requests failed") {
					t.Errorf("bound %v (%s), want [%v, ∞)", *m.Interval, m.Reason, tc.value)
				}
			}
			if err := m.Check(); err != nil {
				t.Error(err)
			}
		})
	}
	// The survivors alone would have said 100 ms: the bias this removes.
	if ok := reqset.Measure(reqs(200, 100)); ok.TTFTP99 != 199 {
		t.Errorf("survivors' p99 %v", ok.TTFTP99)
	}
}

func TestTailStraddles(t *testing.T) {
	tl := reqset.TailOf(reqs(100, 0), 0.9, reqset.TTFT) // p90 = 90; 95 % ranks 84–96
	if tl.Value != 90 || tl.Lo != 84 || tl.Hi != 96 || tl.Coverage < 0.95 {
		t.Fatalf("tail %+v", tl)
	}
	for bound, want := range map[float64]bool{83: false, 84: true, 95.5: true, 96: false} {
		if got := tl.Straddles(bound); got != want {
			t.Errorf("Straddles(%v) = %v, want %v", bound, got, want)
		}
	}
}

func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 0, 0, 1},
		{10, 10, 0.7225, 1},
		{0, 10, 0, 0.2775},
		{50, 100, 0.4038, 0.5962},
	} {
		lo, hi := reqset.Wilson(tc.k, tc.n)
		if math.Abs(lo-tc.lo) > 1e-3 || math.Abs(hi-tc.hi) > 1e-3 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	// At 97.5 % (z = 2.2414; two of them make a 95 % statement): 50 of 100.
	if lo, hi := reqset.WilsonAt(50, 100, 0.975); math.Abs(lo-0.3906) > 1e-3 || math.Abs(hi-0.6094) > 1e-3 {
		t.Errorf("WilsonAt(50, 100, 0.975) = [%.4f, %.4f], want [0.3906, 0.6094]", lo, hi)
	}
}

// TestStatsTail: Measure's TailPxx are TailOf's nearest-rank E2E
// quantiles over every request (failures +∞), the E2EPxx the successes'.
func TestStatsTail(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, failed int
	}{{"none failed", 200, 0}, {"one of 200", 200, 1}, {"two of 100 reach the p99", 100, 2}, {"all failed", 10, 10}, {"empty", 0, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := reqs(tc.n, tc.failed)
			s := reqset.Measure(rs)
			for _, c := range []struct {
				q   float64
				got float64
			}{{0.5, s.TailP50}, {0.95, s.TailP95}, {0.99, s.TailP99}} {
				want := reqset.TailOf(rs, c.q, reqset.E2E).Value
				if c.got != want && !(math.IsNaN(c.got) && math.IsNaN(want)) {
					t.Errorf("p%v %v; want %v", c.q*100, c.got, want)
				}
			}
		})
	}
	if s := reqset.Measure(reqs(100, 2)); !math.IsInf(s.TailP99, 1) || s.E2EP99 != 100 {
		t.Errorf("two of 100 failed: tail p99 %v, successes' %v; want +Inf and 100", s.TailP99, s.E2EP99)
	}
}

// TestBenchLineCountsFailures: bench.txt's p99-ms and ttft-p99-ms count a
// failed request +∞: the number when failures leave the rank, left out
// (never the successes' figure) when they reach it.
func TestBenchLineCountsFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, failed int
		p99       float64 // 0: left out
	}{
		{"none failed", 200, 0, 198},
		{"one of 200 stays below the rank", 200, 1, 199},
		{"two of 100 reach it", 100, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := reqset.BenchLine("x", reqs(tc.n, tc.failed), 10)
			if !ok {
				t.Fatal("no line")
			}
			got := map[string]float64{}
			for _, v := range l.Values {
				got[v.Unit] = v.Value
			}
			if got["p99-ms"] != tc.p99 || got["ttft-p99-ms"] != tc.p99 {
				t.Errorf("p99-ms %v, ttft-p99-ms %v; want %v (0: left out)", got["p99-ms"], got["ttft-p99-ms"], tc.p99)
			}
		})
	}
}
