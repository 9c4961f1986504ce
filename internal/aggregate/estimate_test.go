package aggregate

import (
	"math"
	"math/rand/v2"
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
		{"4 s, never, invalid 30 s: mean 4 over 1, no interval",
			[]Sample{valid(recovery.Measure(4, 1, "")), valid(recovery.Never("never recovered")), {Metric: recovery.Measure(30, 1, "")}},
			result.Measured, 4, 1, false, Excluded{Never: 1, Invalid: 1}},
		{"all never is never",
			[]Sample{valid(recovery.Never("never recovered")), valid(recovery.Never("never recovered"))},
			result.Never, 0, 0, false, Excluded{Never: 2}},
		{"only invalid is not measurable",
			[]Sample{{Metric: recovery.Measure(3, 1, "")}},
			result.NotMeasurable, 0, 0, false, Excluded{Invalid: 1}},
		{"brackets give their hull",
			[]Sample{valid(recovery.Within(2, 3, 1, "")), valid(recovery.Within(2.5, 4, 1, ""))},
			result.Bound, 0, 0, true, Excluded{Bound: 2}},
		{"three measured",
			[]Sample{valid(recovery.Measure(1, 1, "")), valid(recovery.Measure(2, 1, "")), valid(recovery.Measure(6, 1, ""))},
			result.Measured, 3, 3, true, Excluded{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Of(tt.samples, 0.95)
			if e.State != tt.state || e.N != tt.n || (e.Interval != nil) != tt.interval || e.Excluded != tt.excluded {
				t.Fatalf("Of = %+v", e)
			}
			if tt.state == result.Measured && *e.Mean != tt.mean {
				t.Errorf("mean %v, want %v", *e.Mean, tt.mean)
			}
			if err := e.Metric().Check(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestThreeValuesInterval: Student's t with 2 degrees of freedom,
// clipped at zero for a time.
func TestThreeValuesInterval(t *testing.T) {
	e := Of([]Sample{{Metric: recovery.Measure(1, 1, ""), Valid: true}, {Metric: recovery.Measure(2, 1, ""), Valid: true},
		{Metric: recovery.Measure(6, 1, ""), Valid: true}}, 0.95)
	half := 4.302653 * math.Sqrt(7) / math.Sqrt(3)
	if math.Abs(e.Interval[1]-(3+half)) > 1e-4 || e.Interval[0] != 0 || e.Method != MethodTDomain {
		t.Errorf("interval %v (%s), want [0, %.4f] clipped at 0", *e.Interval, e.Method, 3+half)
	}
	d := Of([]Sample{{Metric: drift.Measure(-1, 5, ""), Valid: true}, {Metric: drift.Measure(1, 5, ""), Valid: true}}, 0.95)
	if d.Interval[0] >= -1 || d.Method != MethodT {
		t.Errorf("a signed drift keeps its plain t interval: %v (%s)", *d.Interval, d.Method)
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
			samples = append(samples, Sample{Metric: def.Measure(v, 1, ""), Valid: rng.IntN(5) > 0})
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
		if e.N < 2 && e.Interval != nil {
			t.Fatalf("an interval from one value: %+v", e)
		}
	}
}
