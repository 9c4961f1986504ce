package q4

import (
	"math"
	"testing"
)

func TestSearch(t *testing.T) {
	s := Search{Start: 4, Growth: 2, Precision: 0.05, MaxProbes: 20, MinRate: 0.1}
	capacity := func(c float64) func(float64) (Probe, bool) {
		return func(r float64) (Probe, bool) { return Probe{Rate: r, Pass: r <= c}, true }
	}
	tests := []struct {
		name      string
		probe     func(float64) (Probe, bool)
		max       int
		wantLo    float64 // MaxRate within [wantLo, wantHi]
		wantHi    float64
		driver    bool
		bracketed bool
	}{
		{name: "ramp then bisect", probe: capacity(13), max: 20, wantLo: 13 * 0.95, wantHi: 13, bracketed: true},
		{name: "first probe fails: ramp down", probe: capacity(1.3), max: 20, wantLo: 1.3 * 0.95, wantHi: 1.3, bracketed: true},
		{name: "never fails within the budget", probe: capacity(1e9), max: 3, wantLo: 16, wantHi: 16},
		{name: "nothing passes", probe: capacity(0), max: 20, wantLo: 0, wantHi: 0, bracketed: true},
		{name: "driver-bound stops the search", probe: func(r float64) (Probe, bool) {
			return Probe{Rate: r, Pass: true, DriverBound: r >= 16}, true
		}, max: 20, wantLo: 8, wantHi: 8, driver: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.MaxProbes = tc.max
			f := s.Run(tc.probe)
			if f.MaxRate < tc.wantLo-1e-9 || f.MaxRate > tc.wantHi+1e-9 || f.DriverBound != tc.driver || f.Bracketed != tc.bracketed {
				t.Errorf("frontier %v (driver %v, bracketed %v) after %d probes; want [%v, %v], driver %v, bracketed %v",
					f.MaxRate, f.DriverBound, f.Bracketed, len(f.Probes), tc.wantLo, tc.wantHi, tc.driver, tc.bracketed)
			}
			if len(f.Probes) > tc.max {
				t.Errorf("%d probes, budget %d", len(f.Probes), tc.max)
			}
		})
	}
	f := s.Run(func(float64) (Probe, bool) { return Probe{}, false })
	if !f.Interrupted || len(f.Probes) != 0 || math.Abs(f.MaxRate) > 0 {
		t.Errorf("interrupted search: %+v", f)
	}
}

// TestSearchPrecision: against a step capacity the bracket always holds
// it and ends within the precision — from a hint, from a later scale's
// start (a bracket scaled by n), and when the hint overshoots.
func TestSearchPrecision(t *testing.T) {
	capacity := func(c float64, n *int) func(float64) (Probe, bool) {
		return func(r float64) (Probe, bool) { *n++; return Probe{Rate: r, Pass: r <= c, Trials: 1}, true }
	}
	for _, tc := range []struct {
		name   string
		s      Search
		cap    float64
		probes int // at most
	}{
		{"doubling from 4", Search{Start: 4, Growth: 2, Precision: 0.05, MaxProbes: 12}, 13, 9},
		{"hint just above", Search{Start: 4, Growth: 2, Precision: 0.15, MaxProbes: 6, Hint: func(Probe) float64 { return 10.5 }}, 9.6, 4},
		{"hint just below", Search{Start: 4, Growth: 2, Precision: 0.05, MaxProbes: 12, Hint: func(Probe) float64 { return 38 }}, 43, 5},
		{"later scale, linear", Search{Start: 2 * 42.3, Step: 44.4 / 42.3, Growth: 2, Precision: 0.05, MaxProbes: 12}, 86, 2},
		{"later scale, no gain", Search{Start: 2 * 42.3, Step: 44.4 / 42.3, Growth: 2, Precision: 0.15, MaxProbes: 12}, 43, 6},
		{"later scale, no gain, floored at the first scale", Search{Start: 2 * 42.3, Step: 44.4 / 42.3, Growth: 2, Precision: 0.05, MaxProbes: 12,
			Hint: func(p Probe) float64 { return 42.3 }}, 43, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			f := tc.s.Run(capacity(tc.cap, &n))
			if !f.Bracketed || !f.Precise || f.MaxRate > tc.cap || f.FailRate <= tc.cap {
				t.Errorf("bracket [%v, %v] (precise %v) misses %v", f.MaxRate, f.FailRate, f.Precise, tc.cap)
			}
			if n > tc.probes {
				t.Errorf("%d probes, want ≤ %d", n, tc.probes)
			}
		})
	}
}
