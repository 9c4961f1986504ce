package q4

// Probe is the outcome of one short open-loop trial at Rate.
type Probe struct {
	Rate        float64 `json:"rate"`
	Phase       string  `json:"phase"`
	Pass        bool    `json:"pass"`
	DriverBound bool    `json:"driver_bound"` // the driver could not deliver the rate: no SUT verdict
	Reason      string  `json:"reason,omitempty"`
	Requests    int     `json:"requests"`
	Success     float64 `json:"success"`
	Goodput     float64 `json:"goodput"`
	TTFTP99     float64 `json:"ttft_p99_ms"`
	E2EP99      float64 `json:"e2e_p99_ms"`
	LagP99      float64 `json:"lag_p99_ms"`
}

// Frontier is the search's answer for one scale.
type Frontier struct {
	Engines     int     `json:"engines"`
	MaxRate     float64 `json:"max_rate"` // highest passing rate (0: none passed)
	Best        Probe   `json:"best"`     // the probe at MaxRate
	Probes      []Probe `json:"probes"`
	DriverBound bool    `json:"driver_bound"` // the search stopped at a probe the driver could not deliver
	DriverRate  float64 `json:"driver_rate,omitempty"`
	Bracketed   bool    `json:"bracketed"`           // a failing rate above MaxRate was found
	FailRate    float64 `json:"fail_rate,omitempty"` // the lowest failing rate (0: none failed)
	Interrupted bool    `json:"interrupted,omitempty"`
}

// Search is the frontier search: an exponential ramp from Start by
// Growth until a probe fails (down by Growth when the first fails), then
// bisection between the highest pass and the lowest failure until they
// are within Precision (relative to the failure), in at most MaxProbes
// probes. A driver-bound probe stops the search.
type Search struct {
	Start, Growth, Precision float64
	MaxProbes                int
	MinRate                  float64 // stop ramping down below this
}

// Run searches with probe (which returns ok = false when it was cut
// short and the search must stop).
func (s Search) Run(probe func(rate float64) (Probe, bool)) Frontier {
	var f Frontier
	lo, hi := 0.0, 0.0
	r := s.Start
	for len(f.Probes) < s.MaxProbes {
		p, ok := probe(r)
		if !ok {
			f.Interrupted = true
			break
		}
		f.Probes = append(f.Probes, p)
		if p.DriverBound {
			f.DriverBound, f.DriverRate = true, r
			break
		}
		if p.Pass {
			lo, f.Best = r, p
		} else {
			hi = r
		}
		next, done := s.next(lo, hi, r)
		if done {
			break
		}
		r = next
	}
	f.MaxRate, f.Bracketed, f.FailRate = lo, hi > 0, hi
	return f
}

// next is the rate after a probe at r, or done.
func (s Search) next(lo, hi, r float64) (float64, bool) {
	switch {
	case hi == 0: // every probe passed: ramp up
		return r * s.Growth, false
	case lo == 0: // every probe failed: ramp down
		n := r / s.Growth
		return n, n < s.MinRate
	case (hi-lo)/hi <= s.Precision:
		return 0, true
	}
	return (lo + hi) / 2, false
}
