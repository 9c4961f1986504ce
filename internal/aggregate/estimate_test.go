package aggregate

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/result"
)

var (
	recovery = result.Def{Name: "recovery_s", Unit: result.Seconds, Direction: result.Lower}
	attain   = result.Def{Name: "slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	drift    = result.Def{Name: "p99_drift_ms_per_min", Unit: result.MsPerMin, Direction: result.Lower}
)

func TestOf(t *testing.T) {
	valid := func(m result.Metric) Sample { return Sample{Metric: m, Valid: true} }
	tests := []struct {
		name     string
		samples  []Sample
		state    result.State
		mean     float64
		n        int
		interval bool
		excluded Excluded
	}{
		{"4 s, never, invalid 30 s: mixed states are a bound [4 s, ∞), not a mean",
			[]Sample{valid(recovery.Measure(4, 1, "")), valid(recovery.Never("never recovered")), {Metric: recovery.Measure(30, 1, "")}},
			result.Bound, 0, 1, true, Excluded{Never: 1, Invalid: 1}},
		{"4 s, not measurable: the measured one alone",
			[]Sample{valid(recovery.Measure(4, 1, "")), valid(recovery.NotMeasurable("no engine ids"))},
			result.Measured, 4, 1, false, Excluded{NotMeasurable: 1}},
		{"all never is never",
			[]Sample{valid(recovery.Never("never recovered")), valid(recovery.Never("never recovered"))},
			result.Never, 0, 0, false, Excluded{Never: 2}},
		{"only invalid is not measurable",
			[]Sample{{Metric: recovery.Measure(3, 1, "")}},
			result.NotMeasurable, 0, 0, false, Excluded{Invalid: 1}},
		{"overlapping brackets give their intersection",
			[]Sample{valid(recovery.Within(2, 3, 1, "")), valid(recovery.Within(2.5, 4, 1, ""))},
			result.Bound, 0, 0, true, Excluded{Bound: 2}},
		{"brackets and a not measurable: the brackets' intersection (not measurable left out)",
			[]Sample{valid(recovery.Within(2, 3, 1, "")), valid(recovery.Within(2.5, 4, 1, "")), valid(recovery.NotMeasurable("no engine ids"))},
			result.Bound, 0, 0, true, Excluded{Bound: 2, NotMeasurable: 1}},
		{"a bracket and a never: a bound open above",
			[]Sample{valid(recovery.Within(4, 5, 1, "")), valid(recovery.Never("never recovered"))},
			result.Bound, 0, 0, true, Excluded{Bound: 1, Never: 1}},
		{"never and a not measurable: never",
			[]Sample{valid(recovery.Never("never recovered")), valid(recovery.NotMeasurable("no engine ids"))},
			result.Never, 0, 0, false, Excluded{Never: 1, NotMeasurable: 1}},
		{"three measured: the geometric mean",
			[]Sample{valid(recovery.Measure(1, 1, "")), valid(recovery.Measure(2, 1, "")), valid(recovery.Measure(6, 1, ""))},
			result.Measured, math.Cbrt(12), 3, true, Excluded{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Of(tt.samples, 0.95)
			if e.State != tt.state || e.N != tt.n || (e.Interval != nil) != tt.interval || e.Excluded != tt.excluded {
				t.Fatalf("Of = %+v", e)
			}
			if tt.state == result.Measured && math.Abs(*e.Mean-tt.mean) > 1e-12 {
				t.Errorf("mean %v, want %v", *e.Mean, tt.mean)
			}
			if err := e.Metric().Check(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestThreeValuesInterval: a positive quantity gets Student's t with 2
// degrees of freedom on the log scale; a signed drift keeps its plain t;
// a zero among positive values falls back to t within the domain.
func TestThreeValuesInterval(t *testing.T) {
	e := Of([]Sample{{Metric: recovery.Measure(1, 1, ""), Valid: true}, {Metric: recovery.Measure(2, 1, ""), Valid: true},
		{Metric: recovery.Measure(6, 1, ""), Valid: true}}, 0.95)
	ls := []float64{0, math.Log(2), math.Log(6)}
	m := (ls[0] + ls[1] + ls[2]) / 3
	sd := math.Sqrt(((ls[0]-m)*(ls[0]-m) + (ls[1]-m)*(ls[1]-m) + (ls[2]-m)*(ls[2]-m)) / 2)
	half := 4.302653 * sd / math.Sqrt(3)
	if math.Abs(e.Interval[0]-math.Exp(m-half)) > 1e-4 || math.Abs(e.Interval[1]-math.Exp(m+half)) > 1e-4 || e.Method != MethodLogT {
		t.Errorf("interval %v (%s), want [%.4f, %.4f] on the log scale", *e.Interval, e.Method, math.Exp(m-half), math.Exp(m+half))
	}
	z := Of([]Sample{{Metric: recovery.Measure(0, 1, ""), Valid: true}, {Metric: recovery.Measure(2, 1, ""), Valid: true}}, 0.95)
	if z.Interval[0] != 0 || z.Method != MethodTDomain {
		t.Errorf("a zero among the values: %v (%s), want t clipped at 0", *z.Interval, z.Method)
	}
	d := Of([]Sample{{Metric: drift.Measure(-1, 5, ""), Valid: true}, {Metric: drift.Measure(1, 5, ""), Valid: true}}, 0.95)
	if d.Interval[0] >= -1 || d.Method != MethodT {
		t.Errorf("a signed drift keeps its plain t interval: %v (%s)", *d.Interval, d.Method)
	}
}

// TestAgreeingRepetitionsKeepUncertainty: three repetitions that agree
// exactly never give a zero-width interval: a fraction pools its
// requests (12/12 → Wilson [0.758, 1], not [1, 1]); a latency keeps
// its repetitions' own intervals; without any, no interval is claimed.
func TestAgreeingRepetitionsKeepUncertainty(t *testing.T) {
	v := func(m result.Metric) Sample { return Sample{Metric: m, Valid: true} }
	f := Of([]Sample{v(attain.Measure(1, 4, "")), v(attain.Measure(1, 4, "")), v(attain.Measure(1, 4, ""))}, 0.95)
	if f.Interval == nil || math.Abs(f.Interval[0]-0.7575) > 1e-3 || f.Interval[1] != 1 || f.Method != MethodWilson {
		t.Errorf("12 of 12 pooled: %+v", f)
	}
	p99 := recovery.Measure(100, 300, "").WithInterval(90, 120)
	l := Of([]Sample{v(p99), v(p99), v(p99)}, 0.95)
	if l.Interval == nil || !(l.Interval[0] < 100 && l.Interval[1] > 100) {
		t.Errorf("agreeing p99s with their own intervals: %+v", l)
	}
	bare := Of([]Sample{v(recovery.Measure(5, 1, "")), v(recovery.Measure(5, 1, ""))}, 0.95)
	if bare.Interval != nil || bare.State != result.Measured || bare.Reason == "" {
		t.Errorf("agreeing bare values: %+v, want no interval and a reason", bare)
	}
}

// TestDisagreeingFractionsWiden: repetitions at 0 % and 100 % of 50
// each disagree far beyond binomial sampling; the pooled interval
// widens (and says so) instead of claiming ±10 %.
func TestDisagreeingFractionsWiden(t *testing.T) {
	v := func(m result.Metric) Sample { return Sample{Metric: m, Valid: true} }
	agree := Of([]Sample{v(attain.Measure(0.5, 50, "")), v(attain.Measure(0.5, 50, ""))}, 0.95)
	split := Of([]Sample{v(attain.Measure(0, 50, "")), v(attain.Measure(1, 50, ""))}, 0.95)
	if *split.Mean != 0.5 || split.Interval[1]-split.Interval[0] <= 2*(agree.Interval[1]-agree.Interval[0]) || !strings.Contains(split.Method, "overdispersion") {
		t.Errorf("split %+v against agreeing %+v", split, agree)
	}
}

// TestSignedPercentStaysAboveMinus100: a relative change near −100 %
// keeps its interval inside (−100 %, ∞).
func TestSignedPercentStaysAboveMinus100(t *testing.T) {
	pct := result.Def{Name: "p99_vs_fifo", Unit: result.Percent, Direction: result.Lower}
	v := func(x float64) Sample { return Sample{Metric: pct.Measure(x, 10, ""), Valid: true} }
	e := Of([]Sample{v(-98), v(-85), v(-95)}, 0.95)
	if e.Interval[0] <= -100 || e.Interval[1] <= e.Interval[0] || e.Method != MethodLogRatioT {
		t.Errorf("interval %v (%s)", *e.Interval, e.Method)
	}
}

// TestIntervalsStayInTheirDomain: whatever the values, every interval of
// a mean lies inside the metric's domain and contains the mean.
func TestIntervalsStayInTheirDomain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		def := []result.Def{recovery, attain, drift}[i%3]
		dom, _ := result.DomainOf(def.Unit)
		n := 2 + rng.IntN(8)
		var samples []Sample
		for range n {
			v := rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(6)-2))
			switch def.Unit {
			case result.Fraction:
				v = []float64{0, 1, rng.Float64(), 0.999, 0.001}[rng.IntN(5)]
			case result.MsPerMin:
				v -= rng.ExpFloat64()
			}
			samples = append(samples, Sample{Metric: def.Measure(v, 1+rng.IntN(50), ""), Valid: rng.IntN(5) > 0})
		}
		e := Of(samples, []float64{0.9, 0.95, 0.99}[rng.IntN(3)])
		if e.State != result.Measured {
			continue
		}
		if err := e.Metric().Check(); err != nil {
			t.Fatalf("%+v: %v", e, err)
		}
		if e.Interval != nil && (!dom.ContainsClosed(e.Interval[0]) || !dom.ContainsClosed(e.Interval[1]) || *e.Mean < e.Interval[0] || *e.Mean > e.Interval[1]) {
			t.Fatalf("%s values %v: interval %v outside %s or not around the mean %v", def.Name, e.Values, *e.Interval, dom, *e.Mean)
		}
		if e.N < 2 && e.Interval != nil && e.Method != MethodWilson {
			t.Fatalf("an interval from one value without one of its own: %+v", e)
		}
		if e.Interval != nil && e.Interval[0] == e.Interval[1] {
			t.Fatalf("a zero-width interval: %+v", e)
		}
	}
}

// TestEstimateJSONOpenSide: a bound open above (never in one of two)
// encodes its open side as null and reads back as +∞.
func TestEstimateJSONOpenSide(t *testing.T) {
	v := func(m result.Metric) Sample { return Sample{Metric: m, Valid: true} }
	e := Of([]Sample{v(recovery.Measure(4, 1, "")), v(recovery.Never("never recovered"))}, 0.95)
	b, err := json.Marshal(e)
	if err != nil || !strings.Contains(string(b), `"interval":[4,null]`) {
		t.Fatalf("%s, %v", b, err)
	}
	var back Estimate
	if err := json.Unmarshal(b, &back); err != nil || back.Interval[0] != 4 || !math.IsInf(back.Interval[1], 1) || back.State != result.Bound {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// TestBracketsCombined: overlapping brackets of repetitions combine to
// their intersection; disjoint ones (Q4's [5.63, 6.47] and [3.45, 4.00])
// to their hull, saying they disagree — never a silent hull.
func TestBracketsCombined(t *testing.T) {
	rate := result.Def{Name: "max_rate", Unit: result.ReqPerS, Direction: result.Higher}
	v := func(lo, hi float64) Sample { return Sample{Metric: rate.Within(lo, hi, 5, ""), Valid: true} }
	e := Of([]Sample{v(5.63, 6.47), v(5.62, 6.46), v(5.0, math.Inf(1))}, 0.95)
	if e.State != result.Bound || e.Interval[0] != 5.63 || e.Interval[1] != 6.46 || !strings.Contains(e.Reason, "intersection") {
		t.Errorf("overlapping: %+v", e)
	}
	d := Of([]Sample{v(5.63, 6.47), v(5.62, 6.46), v(3.45, 4.00)}, 0.95)
	if d.State != result.Bound || d.Interval[0] != 3.45 || d.Interval[1] != 6.47 || !strings.Contains(d.Reason, "disjoint") {
		t.Errorf("disjoint: %+v", d)
	}
}

// TestLogScaleCoverage: for log-normal repetitions (R = 3..8) the
// log-scale interval holds the true geometric mean at its 95 % (±3 %).
func TestLogScaleCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const trials = 3000
	hit := 0
	for i := range trials {
		r := 3 + i%6
		var s []Sample
		for range r {
			s = append(s, Sample{Metric: recovery.Measure(math.Exp(1+0.5*rng.NormFloat64()), 1, ""), Valid: true})
		}
		e := Of(s, 0.95)
		if e.Method != MethodLogT {
			t.Fatalf("method %q", e.Method)
		}
		if e.Interval[0] <= math.E && math.E <= e.Interval[1] {
			hit++
		}
	}
	if got := float64(hit) / trials; math.Abs(got-0.95) > 0.03 {
		t.Errorf("log-scale interval covered the geometric mean in %.3f, want 0.95 ± 0.03", got)
	}
}

// TestPValuesAreNotPooledAsCounts: a fraction that is not k successes of
// N (a p-value over N rounds) is not pooled as a binomial count.
func TestPValuesAreNotPooledAsCounts(t *testing.T) {
	p := result.Def{Name: "critical_ttft_p99_p", Unit: result.Fraction, Direction: result.Lower}
	s := Sample{Metric: p.Measure(1.0/3, 2, ""), Valid: true}
	e := Of([]Sample{s, s, s}, 0.95)
	if e.Method == MethodWilson || e.Mean == nil || math.Abs(*e.Mean-1.0/3) > 1e-12 {
		t.Fatalf("three p-values of 1/3 over 2 rounds: %+v (method %s)", e, e.Method)
	}
	c := Sample{Metric: attain.Measure(23.0/24, 24, ""), Valid: true}
	if e := Of([]Sample{c, c}, 0.95); e.Method != MethodWilson {
		t.Fatalf("23 of 24 twice: method %s, want pooled Wilson", e.Method)
	}
}

// TestOpenSideOpensThatSideOnly: repetitions whose own intervals are
// open above (a p99 from too few requests) give an estimate open above
// whose lower end still stands, not [0, ∞).
func TestOpenSideOpensThatSideOnly(t *testing.T) {
	p99 := result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	open := func(v, lo float64) Sample {
		return Sample{Metric: p99.Measure(v, 150, "").WithInterval(lo, math.Inf(1)), Valid: true}
	}
	e := Of([]Sample{open(200, 150), open(210, 160)}, 0.95)
	if e.Interval == nil || !(e.Interval[0] > 100) || !math.IsInf(e.Interval[1], 1) {
		t.Fatalf("interval %v; want a lower end near the repetitions' and open above", e.Interval)
	}
}
