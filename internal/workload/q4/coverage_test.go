package q4

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
)

// slotServer is a k-slot FIFO server of fixed service time, simulated
// in virtual time: the frontier's ground truth and the probes' target.
type slotServer struct {
	k            int
	service, ttf float64 // seconds: a slot's hold, first token after ttf
}

// trial sends Poisson arrivals at rate for d seconds to an idle server
// and returns each request's record (TTFT and E2E from the intended
// send, as the harness times them).
func (s slotServer) trial(rng *rand.Rand, rate, d float64) []record.Request {
	free := make([]float64, s.k) // when each slot frees
	var rs []record.Request
	for t := rng.ExpFloat64() / rate; t < d; t += rng.ExpFloat64() / rate {
		i := 0
		for j := range free {
			if free[j] < free[i] {
				i = j
			}
		}
		start := math.Max(t, free[i])
		free[i] = start + s.service
		wait := start - t
		rs = append(rs, record.Request{OK: true, SLOMet: true, FirstToken: 1,
			TTFTMs: 1000 * (wait + s.ttf), E2EMs: 1000 * (wait + s.service)})
	}
	return rs
}

// length is the probe length the search gives rate: ≥ probe, ≥ the
// requests the quantile needs for an upper bound.
func (c *Config) simLength(rate float64) float64 {
	return math.Max(c.Probe.Seconds(), float64(minSamples(c.SLO.Quantile))/rate)
}

// truth is the frontier of the probe protocol: the rate at which a
// random request of a trial (of the length the search gives that rate)
// meets the TTFT bound with probability exactly the quantile — found by
// bisection over many simulated trials.
func (s slotServer) truth(c *Config, rng *rand.Rand) float64 {
	bound := c.SLO.TTFT.Seconds() * 1000
	lo, hi := 0.5, 4*float64(s.k)/s.service
	for range 30 {
		mid := (lo + hi) / 2
		var xs []float64
		for range 300 {
			for _, r := range s.trial(rng, mid, c.simLength(mid)) {
				xs = append(xs, r.TTFTMs)
			}
		}
		if quantile.Of(xs, c.SLO.Quantile) <= bound {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TestBracketCoverage is the Q4 frontier as a statistical statement:
// over 40 seeds, a search against a 2-slot server of 100 ms service
// (capacity 20 req/s; the p90 TTFT ≤ 300 ms frontier computed by
// simulation) brackets the true frontier in ≥ 90 % of them. Virtual
// time: it takes no wall-clock time worth speaking of.
func TestBracketCoverage(t *testing.T) {
	srv := slotServer{k: 2, service: 0.1, ttf: 0.02}
	c := Default(true)
	c.SLO = SLO{Quantile: 0.9, TTFT: 300 * time.Millisecond, E2E: 5 * time.Second, MinSuccess: 0.99}
	c.Probe, c.MaxProbes, c.Precision, c.StartRate = 2*time.Second, 10, 0.15, 4
	q := &q4{cfg: c}
	truth := srv.truth(c, rand.New(rand.NewPCG(99, 1)))
	const seeds = 40
	held, widths := 0, []float64{}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		probe := func(rate float64) (Probe, bool) {
			d := c.simLength(rate)
			var pooled []record.Request
			var p Probe
			for trial := 1; trial <= minTrials+c.Repeats; trial++ {
				rs := srv.trial(rng, rate, d)
				for i := range rs {
					rs[i].Phase = fmt.Sprintf("sim#%d", trial)
				}
				pooled = append(pooled, rs...)
				p = q.judge(rate, "sim", pooled, time.Duration(d*float64(time.Second)), trial)
				if trial >= minTrials && !p.Uncertain {
					break
				}
			}
			return p, true
		}
		s := Search{Start: c.StartRate, Step: c.Growth, Growth: c.Growth, Precision: c.Precision, MaxProbes: c.MaxProbes, MinRate: 0.05}
		f := s.Run(probe)
		hi := nonzeroInf(f.FailRate)
		if f.MaxRate <= truth && truth <= hi {
			held++
		} else {
			t.Logf("seed %d: bracket [%.2f, %.2f] misses %.2f (probes %v)", seed, f.MaxRate, hi, truth, rates(f.Probes))
		}
		widths = append(widths, (hi-f.MaxRate)/truth)
	}
	t.Logf("true frontier %.2f req/s; %d of %d brackets hold it; median relative width %.2f", truth, held, seeds, median(widths))
	if float64(held) < 0.9*seeds {
		t.Errorf("%d of %d brackets hold the true frontier %.2f, want ≥ 90 %%", held, seeds, truth)
	}
}

func rates(ps []Probe) []string {
	var out []string
	for _, p := range ps {
		v := "fail"
		switch {
		case p.Pass:
			v = "pass"
		case p.Undecided:
			v = "undecided"
		}
		out = append(out, v+"@"+formatRate(p.Rate))
	}
	return out
}

func formatRate(r float64) string { return time.Duration(r * float64(time.Second)).String() }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
