package calibrate_test

import (
	"math"
	"testing"

	"github.com/sagebench/sagebench/internal/calibrate"
)

func sample(ttft, e2e float64) calibrate.Sample {
	var s calibrate.Sample
	s.V[calibrate.TTFT], s.Has[calibrate.TTFT] = ttft, true
	s.V[calibrate.E2E], s.Has[calibrate.E2E] = e2e, true
	return s
}

func truthOf(ttft ...float64) []calibrate.Truth {
	var out []calibrate.Truth
	for _, v := range ttft {
		out = append(out, calibrate.Truth{Stream: true, Tokens: 2, TTFTMs: v, TokenMs: []float64{v, v + 10}, E2EMs: v + 10, DueTTFTMs: 50, DueITLMs: 10})
	}
	return out
}

// TestGradeExport: the counts (lost, double-counted), the distribution
// errors and the reproduction of the tool's own median, each able to fail.
func TestGradeExport(t *testing.T) {
	truth := truthOf(50, 51, 52)
	for _, tc := range []struct {
		name          string
		e             calibrate.Export
		lost, extra   int
		errMedian     float64
		own, reproduc bool
	}{
		{"exact", calibrate.Export{Requests: []calibrate.Sample{sample(50, 60), sample(51, 61), sample(52, 62)}}, 0, 0, 0, false, false},
		{"2 ms slow", calibrate.Export{Requests: []calibrate.Sample{sample(52, 62), sample(53, 63), sample(54, 64)}}, 0, 0, 2, false, false},
		{"one lost", calibrate.Export{Requests: []calibrate.Sample{sample(50, 60), sample(54, 64)}}, 1, 0, 1, false, false},
		{"one failed is not lost", calibrate.Export{Requests: []calibrate.Sample{sample(50, 60), sample(54, 64)}, Failed: 1}, 0, 0, 1, false, false},
		{"double-counted", calibrate.Export{Requests: []calibrate.Sample{sample(50, 60), sample(51, 61), sample(52, 62), sample(52, 62)}}, 0, 1, 0.5, false, false},
		{"own median reproduced", withOwn(calibrate.Export{Requests: []calibrate.Sample{sample(50, 60), sample(51, 61), sample(52, 62)}}, 51.05), 0, 0, 0, true, true},
		{"own median not reproduced", withOwn(calibrate.Export{Requests: []calibrate.Sample{sample(50, 60), sample(51, 61), sample(52, 62)}}, 51.2), 0, 0, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := calibrate.GradeExport(tc.e, truth)
			if g.Lost != tc.lost || g.Extra != tc.extra {
				t.Errorf("lost %d extra %d, want %d %d", g.Lost, g.Extra, tc.lost, tc.extra)
			}
			m := g.Metrics[0]
			if m.Metric != "TTFT" || math.Abs(m.ErrMedian-tc.errMedian) > 1e-9 || m.True != 51 {
				t.Errorf("%s: error median %v (true %v), want %v (true 51)", m.Metric, m.ErrMedian, m.True, tc.errMedian)
			}
			if m.OwnKnown != tc.own || m.Reproduced != tc.reproduc {
				t.Errorf("own known %v reproduced %v, want %v %v", m.OwnKnown, m.Reproduced, tc.own, tc.reproduc)
			}
		})
	}
}

func withOwn(e calibrate.Export, ttft float64) calibrate.Export {
	e.Own[calibrate.TTFT], e.OwnHas[calibrate.TTFT] = ttft, true
	return e
}

func TestQuantiles(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"linear median", calibrate.Quantile(v, 0.5), 2.5},
		{"linear p99", calibrate.Quantile(v, 0.99), 3.97},
		{"cdf median", calibrate.CDFQuantile(v, 0.5), 2},
		{"cdf p99", calibrate.CDFQuantile(v, 0.99), 4},
		{"cdf with ties", calibrate.CDFQuantile([]float64{1, 2, 2, 3}, 0.3), 2},
		{"empty", calibrate.Quantile(nil, 0.5), 0},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
