package quantile_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/result"
)

func TestRank(t *testing.T) {
	tests := []struct {
		name string
		n    int
		q    float64
		want int
	}{
		{"median of 1", 1, 0.5, 1},
		{"median of 4 is the 2nd", 4, 0.5, 2},
		{"p90 of 10 is the 9th, not the 10th by rounding", 10, 0.9, 9},
		{"p99 of 100 is the 99th", 100, 0.99, 99},
		{"p99 of 6 is the max", 6, 0.99, 6},
		{"q=0 is the min", 5, 0, 1},
		{"none", 0, 0.5, 0},
		{"p99.9 of 1,000,999 is ⌈999,998.001⌉", 1000999, 0.999, 999999},
		{"p99.9 of 2,000,998 is ⌈1,998,997.002⌉", 2000998, 0.999, 1998998},
		{"p99 of 10⁸ is exactly 99,000,000", 100_000_000, 0.99, 99_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := quantile.Rank(tc.n, tc.q); got != tc.want {
				t.Errorf("Rank(%d, %v) = %d, want %d", tc.n, tc.q, got, tc.want)
			}
		})
	}
}

func TestOfLeavesInputAlone(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := quantile.Of(xs, 0.5); got != 3 {
		t.Errorf("median %v, want 3", got)
	}
	if !slices.Equal(xs, []float64{5, 1, 4, 2, 3}) {
		t.Errorf("Of sorted its input: %v", xs)
	}
	if !math.IsNaN(quantile.Of(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}

func TestBeyond(t *testing.T) {
	for _, tc := range []struct {
		n    int
		q    float64
		want bool
	}{{6, 0.99, true}, {99, 0.99, true}, {100, 0.99, false}, {9, 0.9, true}, {10, 0.9, false}, {1, 0.5, true}, {2, 0.5, false}} {
		if got := quantile.Beyond(tc.n, tc.q); got != tc.want {
			t.Errorf("Beyond(%d, %v) = %v, want %v", tc.n, tc.q, got, tc.want)
		}
	}
	if quantile.Needed(0.99) != 100 || quantile.Needed(0.9) != 10 {
		t.Errorf("Needed(0.99) = %d, Needed(0.9) = %d", quantile.Needed(0.99), quantile.Needed(0.9))
	}
}

// TestRanksKnown: the ranks of the textbook median interval of 10
// (X(2), X(9), coverage 0.9785) and of large n near the normal
// approximation.
func TestRanksKnown(t *testing.T) {
	lo, hi, cov := quantile.Ranks(10, 0.5, 0.95)
	if lo != 2 || hi != 9 || math.Abs(cov-0.978515625) > 1e-9 {
		t.Errorf("median of 10: ranks [%d, %d] coverage %v, want [2, 9] 0.9785", lo, hi, cov)
	}
	lo, hi, cov = quantile.Ranks(1000, 0.99, 0.95)
	// normal approximation: 990 ∓ 1.96·√9.9 ≈ 983.8 … 996.2
	if lo < 982 || lo > 986 || hi < 995 || hi > 998 || cov < 0.95 {
		t.Errorf("p99 of 1000: ranks [%d, %d] coverage %v", lo, hi, cov)
	}
	if _, hi, _ := quantile.Ranks(50, 0.99, 0.95); hi != 51 {
		t.Errorf("p99 of 50: upper rank %d, want open (51)", hi)
	}
}

// TestCoverage is the property test: over random samples of several
// distributions, sizes and quantiles, the interval holds the true
// quantile as often as its stated coverage says (±3 %), and the stated
// coverage is never below the nominal 95 %.
func TestCoverage(t *testing.T) {
	type dist struct {
		name string
		draw func(*rand.Rand) float64
		inv  func(p float64) float64
	}
	dists := []dist{
		{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() }, func(p float64) float64 { return -math.Log1p(-p) }},
		{"uniform", func(r *rand.Rand) float64 { return r.Float64() }, func(p float64) float64 { return p }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }, func(p float64) float64 { return math.Exp(math.Sqrt2 * math.Erfinv(2*p-1)) }},
	}
	trials := 1500
	if testing.Short() {
		trials = 400
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range dists {
		for _, tc := range []struct {
			n int
			q float64
		}{{7, 0.5}, {30, 0.9}, {200, 0.95}, {400, 0.99}, {1 + rng.IntN(300), []float64{0.5, 0.9, 0.95, 0.99}[rng.IntN(4)]}} {
			truth := d.inv(tc.q)
			hit, stated := 0, 0.0
			xs := make([]float64, tc.n)
			for range trials {
				for i := range xs {
					xs[i] = d.draw(rng)
				}
				e := quantile.OfSample(xs, tc.q, quantile.Confidence)
				if e.Lo <= truth && truth <= e.Hi {
					hit++
				}
				stated += e.Coverage
			}
			got, want := float64(hit)/float64(trials), stated/float64(trials)
			tol := 0.03
			if testing.Short() {
				tol = 0.05
			}
			if math.Abs(got-want) > tol || want < quantile.Confidence {
				t.Errorf("%s n=%d q=%v: covered %.3f, stated %.3f", d.name, tc.n, tc.q, got, want)
			}
		}
	}
}

// TestLowerBoundCoverage: the one-sided bound of a sample too small for
// its quantile holds at its stated coverage.
func TestLowerBoundCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 3000
	truth := -math.Log1p(-0.99)
	hit, stated := 0, 0.0
	xs := make([]float64, 40)
	for range trials {
		for i := range xs {
			xs[i] = rng.ExpFloat64()
		}
		e := quantile.OfSample(xs, 0.99, quantile.Confidence)
		if !e.Beyond {
			t.Fatal("p99 of 40 is not beyond the sample")
		}
		if e.LowerBound <= truth {
			hit++
		}
		stated += e.LowerCoverage
	}
	if got, want := float64(hit)/trials, stated/trials; math.Abs(got-want) > 0.03 || want < 0.95 {
		t.Errorf("lower bound covered %.3f, stated %.3f", got, want)
	}
}

var def = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}

// seq is n values 1..n with the first failed ones +∞.
func seq(n, failed int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
		if i >= n-failed {
			xs[i] = math.Inf(1)
		}
	}
	return xs
}

// TestMetricStates: a quantile metric never claims more than its
// sample: the max of six is a bound that says so, failures push the
// quantile to +∞, and a measured one carries N, interval and coverage.
func TestMetricStates(t *testing.T) {
	tests := []struct {
		name   string
		xs     []float64
		state  result.State
		reason string
	}{
		{"p99 of 200 measured", seq(200, 0), result.Measured, ""},
		{"1 % failed: still measured, the failures said", seq(200, 2), result.Measured, "2 of 200 failed"},
		{"p99 of six: max of 6, a bound", []float64{13.7, 16.1, 16.2, 26.2, 93.7, 149.3}, result.Bound, "max of 6 is 149 ms"},
		{"3 of 200 failed: the p99 is a failure, a bound from the interval's low end", seq(200, 3), result.Bound, "3 of 200 requests failed"},
		{"half failed: never, +∞ even at the interval's low end", seq(200, 100), result.Never, "100 of 200 requests failed"},
		{"all failed: never, +∞", seq(10, 10), result.Never, "every request of 10 failed"},
		{"nothing sent", nil, result.NotMeasurable, "nothing sent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := quantile.OfSample(tc.xs, 0.99, quantile.Confidence).Metric(def, "nothing sent")
			if m.State != tc.state || !strings.Contains(m.Reason, tc.reason) {
				t.Fatalf("got %s %q, want %s containing %q", m.State, m.Reason, tc.state, tc.reason)
			}
			if err := m.Check(); err != nil {
				t.Error(err)
			}
			if tc.state == result.Measured && (m.N != len(tc.xs) || m.Interval == nil || m.Coverage < 0.95) {
				t.Errorf("measured without N, interval or coverage: %+v", m)
			}
			if tc.state == result.Bound && !math.IsInf(m.Interval[1], 1) {
				t.Errorf("bound %v is not open above", *m.Interval)
			}
		})
	}
}
