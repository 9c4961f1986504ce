package load

import (
	"math"
	"time"
)

// rateSchedule places arrivals of a time-varying rate r(t) by inverting
// the integrated rate Λ(t) = ∫₀ᵗ r: arrival i is at Λ⁻¹(uᵢ), where uᵢ is a
// running sum of unit exponentials (non-homogeneous Poisson, by the
// time-rescaling theorem) or uᵢ = i (uniform spacing).
func rateSchedule(cfg ScheduleConfig, g *gen) (Schedule, error) {
	inv := rampInverse(cfg)
	peak := math.Max(cfg.Rate, cfg.RampTo)
	if cfg.Process == ProcessOnOff {
		inv = onOffInverse(cfg)
		peak = math.Max(cfg.Rate, cfg.BurstRate)
	}
	step := func() float64 { return g.exp() }
	u := step()
	if cfg.Spacing == SpacingUniform {
		step = func() float64 { return 1 }
		u = 0
	}
	limit := cfg.Duration.Seconds()
	offs := make([]time.Duration, 0, expectedLen(cfg, peak))
	for cfg.Count == 0 || len(offs) < cfg.Count {
		t, ok := inv(u)
		if !ok || (limit > 0 && t >= limit) {
			break
		}
		if err := checkArrival(t, len(offs)); err != nil {
			return Schedule{}, err
		}
		offs = append(offs, secs(t))
		u += step()
	}
	s := Schedule{Offsets: offs, Length: cfg.Duration}
	if s.Length == 0 && len(offs) > 0 {
		s.Length = offs[len(offs)-1]
	}
	return s, nil
}

// onOffInverse inverts Λ for a rate that is BurstRate during the first
// BurstLength of every BurstPeriod and Rate for the rest of it.
func onOffInverse(cfg ScheduleConfig) func(u float64) (float64, bool) {
	p, l := cfg.BurstPeriod.Seconds(), cfg.BurstLength.Seconds()
	b, r := cfg.BurstRate, cfg.Rate
	inBurst := b * l
	perPeriod := inBurst + r*(p-l)
	return func(u float64) (float64, bool) {
		k := math.Floor(u / perPeriod)
		rem := u - k*perPeriod
		if rem < inBurst || r == 0 {
			return k*p + rem/b, true
		}
		return k*p + l + (rem-inBurst)/r, true
	}
}

// rampInverse inverts Λ(t) = r0·t + a·t²/2 with a = (r1-r0)/D, using the
// cancellation-free root t = 2u / (r0 + √(r0² + 2au)). Beyond the end of
// the ramp (or where the rate would have reached zero) it reports false.
func rampInverse(cfg ScheduleConfig) func(u float64) (float64, bool) {
	d := cfg.Duration.Seconds()
	r0 := cfg.Rate
	a := (cfg.RampTo - r0) / d
	total := r0*d + a*d*d/2
	return func(u float64) (float64, bool) {
		if u > total {
			return 0, false
		}
		disc := r0*r0 + 2*a*u
		if disc < 0 {
			return 0, false
		}
		den := r0 + math.Sqrt(disc)
		if den <= 0 {
			return 0, u == 0
		}
		return 2 * u / den, true
	}
}
