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
