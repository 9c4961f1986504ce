package q4

import "math"

// Probe is the outcome of one rate: one open-loop trial, or two pooled
// when the first one's verdict hung on sampling (Trials = 2).
type Probe struct {
	Rate  float64 `json:"rate"`
	Phase string  `json:"phase"`
	Pass  bool    `json:"pass"`
	// Undecided: the quantile's interval straddled the SLO even after the
	// repeats: neither a pass nor a failure of the bracket.
	Undecided bool `json:"undecided,omitempty"`
	// Realized is the arrival rate the probe's schedule delivered
	// (requests ÷ time): a Poisson trial's count varies about the
	// nominal Rate.
	Realized    float64 `json:"realized_rate"`
	DriverBound bool    `json:"driver_bound"` // the driver could not deliver the rate: no SUT verdict
	Reason      string  `json:"reason,omitempty"`
	Trials      int     `json:"trials"`
	Seconds     float64 `json:"seconds"` // length of each trial
	Requests    int     `json:"requests"`
	Success     float64 `json:"success"`
	Goodput     float64 `json:"goodput"`
	TTFTQ       float64 `json:"ttft_q_ms"` // the judged quantile of TTFT (failed requests count as +∞)
	E2EQ        float64 `json:"e2e_q_ms"`
	LagP99      float64 `json:"lag_p99_ms"`
	ServiceMs   float64 `json:"service_ms"` // median E2E of the successful requests
	// Uncertain: the first trial's verdict would flip within one standard
	// error of the quantile's rank (or of the success ratio).
	Uncertain bool `json:"uncertain,omitempty"`
}

// Frontier is the search's answer for one scale.
type Frontier struct {
	Engines     int     `json:"engines"`
	MaxRate     float64 `json:"max_rate"` // highest passing rate (0: none passed)
	Best        Probe   `json:"best"`     // the probe at MaxRate
	Probes      []Probe `json:"probes"`
	Trials      int     `json:"trials"`
	DriverBound bool    `json:"driver_bound"` // the search stopped at a probe the driver could not deliver
	DriverRate  float64 `json:"driver_rate,omitempty"`
	Bracketed   bool    `json:"bracketed"`           // a failing rate above MaxRate was found
	FailRate    float64 `json:"fail_rate,omitempty"` // the lowest failing rate (0: none failed)
	Interrupted bool    `json:"interrupted,omitempty"`
	Precise     bool    `json:"precise"` // the bracket is within the precision
}

// Search is the frontier search (an undecided probe steers it like a
// failure but bounds nothing: the bracket is [highest pass, lowest
// decided failure]): a ramp from Start until a probe fails
// (down while they fail), then bisection between the highest pass and
// the lowest failure until (fail − pass) ÷ fail ≤ Precision, within
// MaxProbes trials. The ramp's first factor is Step; each further step
// in the same direction squares it, up to Growth (no Step: Growth). Hint, when set, gives
// the second probe's rate from the first (a capacity estimate: slots ÷
// service time); the ramp then restarts from there with factor
// 1 + Precision. A driver-bound probe stops the search.
type Search struct {
	Start, Step, Growth, Precision float64
	MaxProbes                      int     // trials
	MinRate                        float64 // stop ramping down below this
	Hint                           func(first Probe) float64
}

// Run searches with probe (which returns ok = false when it was cut
// short and the search must stop).
func (s Search) Run(probe func(rate float64) (Probe, bool)) Frontier {
	var f Frontier
	lo, hi, nav := 0.0, 0.0, 0.0 // nav: the lowest failing or undecided rate, which steers
	r, step := s.Start, s.Step
	if step <= 1 {
		step = s.Growth
	}
	step = max(step, 1+s.Precision)
	lastPass, moves := false, 0
	for f.Trials < s.MaxProbes {
		p, ok := probe(r)
		if !ok {
			f.Interrupted = true
			break
		}
		f.Probes = append(f.Probes, p)
		f.Trials += max(p.Trials, 1)
		if p.DriverBound {
			f.DriverBound, f.DriverRate = true, r
			break
		}
		if p.Pass && r > lo {
			lo, f.Best = r, p
		} else if !p.Pass && !p.Undecided && (hi == 0 || r < hi) {
			hi = r
		}
		if !p.Pass && (nav == 0 || r < nav) {
			nav = r
		}
		if len(f.Probes) == 1 && s.Hint != nil {
			if h := s.Hint(p); h > 0 && (p.Pass && h > r || !p.Pass && h < r) {
				r, step, lastPass, moves = h, 1+s.Precision, p.Pass, 0
				continue
			}
		}
		if moves > 0 && p.Pass == lastPass { // the same way again: gallop
			step = math.Min(step*step, math.Max(s.Growth, 1+s.Precision))
		}
		lastPass, moves = p.Pass, moves+1
		next, done := s.next(lo, nav, step, p.Pass)
		if done {
			break
		}
		r = next
	}
	f.MaxRate, f.Bracketed, f.FailRate = lo, hi > 0, hi
	f.Precise = lo > 0 && hi > 0 && (hi-lo)/hi <= s.Precision+1e-12
	return f
}

// next is the rate after a probe (pass says whether it passed), or done:
// a ramp while one side is open, then a step of the current factor from
// the last probe towards the other side, never past the midpoint.
func (s Search) next(lo, hi, step float64, pass bool) (float64, bool) {
	switch {
	case hi == 0: // every probe passed: ramp up
		return lo * step, false
	case lo == 0: // every probe failed: ramp down
		n := hi / step
		return n, n < s.MinRate
	case (hi-lo)/hi <= s.Precision+1e-12:
		return 0, true
	case pass:
		return math.Min((lo+hi)/2, lo*step), false
	}
	return math.Max((lo+hi)/2, hi/step), false
}
