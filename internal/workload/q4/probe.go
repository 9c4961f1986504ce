package q4

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/traffic"
)

// overloadLength is the trial length at which an overload as large as
// the precision shows: at (1 + p) × capacity the wait grows by p seconds a
// second, so after d the q-quantile request waits about p·q·d, past the
// TTFT bound B when d ≥ B ÷ (q·p). A shorter trial passes overloads the
// precision claims to tell apart.
func (c *Config) overloadLength() time.Duration {
	b := c.SLO.TTFT
	if b <= 0 {
		b = c.SLO.E2E
	}
	return time.Duration(float64(b) / (c.SLO.Quantile * c.Precision))
}

// minSamples is the fewest requests (pooled over a probe's trials)
// that can pass "a share ≥ q met the bound" at 95 %: even when every one
// meets it, the Wilson interval of n of n reaches below q until
// n ≥ z²·q ÷ (1 − q) (35 for the p90, 381 for the p99).
func minSamples(q float64) int {
	const z = 1.959964
	return int(math.Ceil(z*z*q/(1-q) - 1e-9))
}

// quantileName is "99" for 0.99, "99.9" for 0.999.
func quantileName(q float64) string { return strconv.FormatFloat(100*q, 'f', -1, 64) }

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', -1, 64) + " %" }

// length is how long a trial at rate lasts: ≥ probe, ≥ service_multiple
// × the median service time measured at the lowest passing rate, ≥ the
// requests the quantile needs at rate, ≥ the overload length; ≤
// max_probe.

func (s *searcher) length(rate float64) time.Duration {
	d, _ := s.lengthCapped(rate)
	return d
}

// lengthCapped is length, and the length the rules asked for before
// max_probe.
func (s *searcher) lengthCapped(rate float64) (time.Duration, time.Duration) {
	c := s.q.cfg
	d := c.Probe
	d = max(d, time.Duration(c.ServiceMultiple*s.service*float64(time.Millisecond)))
	d = max(d, time.Duration(float64(minSamples(c.SLO.Quantile))/float64(minTrials)/rate*float64(time.Second)))
	d = max(d, c.overloadLength())
	return min(d, c.MaxProbe).Round(10 * time.Millisecond), d.Round(10 * time.Millisecond)
}

// probe runs a rate: one trial, and more (pooled) while the verdict
// hangs on sampling and q4.repeats allows.
func (s *searcher) probe(engines int, rate float64) (Probe, bool) {
	d, asked := s.lengthCapped(rate)
	name := fmt.Sprintf("n%d@%.2f", engines, rate)
	var pooled []record.Request
	var p Probe
	for trial := 1; trial <= minTrials+s.q.cfg.Repeats; trial++ {
		phase := name
		if trial > 1 {
			phase = fmt.Sprintf("%s#%d", name, trial)
		}
		rs, ok := s.send(phase, rate, d)
		if !ok {
			return Probe{}, false
		}
		pooled = append(pooled, rs...)
		p = s.q.judge(rate, name, pooled, d, trial)
		if trial >= minTrials && !p.Uncertain || p.DriverBound {
			break
		}
	}
	if asked > d {
		p.Reason = joinReason(p.Reason, fmt.Sprintf("cut to max_probe %v; the rules asked %v", d, asked))
	}
	// The service time is the one measured at the lowest passing rate
	// (the least queueing); until a rate passes, the first measured.
	if p.ServiceMs > 0 && (s.service == 0 || p.Pass && (!s.passed || rate < s.lowest)) {
		s.service, s.lowest, s.passed = p.ServiceMs, rate, s.passed || p.Pass
	}
	return p, true
}

// trial sends one open-loop trial at rate for d and returns its records.
func (s *searcher) trial(phase string, rate float64, d time.Duration) ([]record.Request, bool) {
	c := s.q.cfg
	seed := s.env.Seed + int64(s.seq)
	sched, err := load.NewSchedule(load.ScheduleConfig{Process: c.Arrivals, Rate: rate, Duration: d}, seed)
	if err != nil {
		return nil, s.ctx.Err() == nil
	}
	if sched.Len() == 0 { // no arrival in d: recorded, so the run recomputes
		at := time.Since(s.env.Start)
		s.out.Phases = append(s.out.Phases, summary.Phase{Name: phase, Start: at, End: at, ScheduleSpan: sched.Span()})
		return nil, s.ctx.Err() == nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5134))
	items := make([]traffic.Item, sched.Len())
	for i := range items {
		items[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: "tenant-a", Priority: protocol.PriorityNormal, Text: rng.Uint64()}
	}
	c.LLM.Fill(items) // the same shape at every rate and scale of the search
	traffic.FillTrace(items, sched, c.LLM.BlockTokens)
	var mine reqset.Set
	mine.Grow(sched.Len())
	inner := *s.env
	inner.Record = func(r record.Request) { mine.Add(r); s.env.Record(r) }
	ph := traffic.Phase{Name: phase, Schedule: sched, Items: items, Shapes: traffic.Shapes{LLM: c.LLM},
		Deadline: func(traffic.Item) time.Duration { return c.SLO.E2E },
		SLOMet:   func(r *record.Request) bool { return traffic.LLMSLO(r, c.SLO.TTFT, c.SLO.E2E) }}
	sp := ph.Run(s.ctx, &inner, s.seq)
	s.seq += sched.Len()
	s.out.Phases = append(s.out.Phases, sp)
	return mine.All(), !sp.Interrupted
}

// judge decides a rate from its records: driver first, then the
// success ratio, then the SLO as a statistical statement about the
// rate, not about one trial. "The q-quantile of TTFT ≤ B" is "a share
// ≥ q of requests has TTFT ≤ B" (a failed request never does: +∞), and
// a probe's requests are not independent — a trial's share one queue —
// so the share is estimated over trials (shareWithin): the probe passes
// when the share's 95 % interval lies wholly at or above q for TTFT and
// E2E, fails when either interval lies wholly below, and is undecided
// otherwise — then more trials are pooled, and a rate still undecided is
// neither a pass nor a failure of the bracket. One trial decides
// nothing.
func (q *q4) judge(rate float64, name string, rs []record.Request, d time.Duration, trials int) Probe {
	c := q.cfg
	st := reqset.Measure(rs)
	lags := make([]float64, len(rs))
	for i := range rs {
		lags[i] = rs[i].LagMs
	}
	ttft := reqset.TailOf(rs, c.SLO.Quantile, reqset.TTFT)
	e2e := reqset.TailOf(rs, c.SLO.Quantile, reqset.E2E)
	p := Probe{Rate: rate, Realized: float64(st.N) / (d.Seconds() * float64(max(trials, 1))), Phase: name, Requests: st.N, Success: st.SuccessRate, Seconds: d.Seconds(), Trials: trials,
		TTFTQ: ttft.Value, E2EQ: e2e.Value, LagP99: reqset.Quantile(lags, 0.99), ServiceMs: st.E2EP50,
		Goodput: float64(st.Met) / (d.Seconds() * float64(max(trials, 1)))}
	tb, eb := record.Millis(c.SLO.TTFT), record.Millis(c.SLO.E2E)
	lagBound := record.Millis(c.MaxDriverLag)
	qn := "p" + quantileName(c.SLO.Quantile)
	wt, we := within{Share: 1, Lo: 1, Hi: 1}, within{Share: 1, Lo: 1, Hi: 1}
	if tb > 0 {
		wt = shareWithin(rs, tb, reqset.TTFT)
	}
	if eb > 0 {
		we = shareWithin(rs, eb, reqset.E2E)
	}
	sLo, sHi := reqset.Wilson(st.OK, st.N)
	switch {
	case st.N == 0:
		p.Undecided, p.Reason = true, "undecided: no request arrived in its trials (no evidence at this rate)"
	case p.LagP99 > lagBound:
		p.DriverBound, p.Reason = true, fmt.Sprintf("driver lag p99 %.1f ms > %.1f ms", p.LagP99, lagBound)
	case sHi < c.SLO.MinSuccess:
		p.Reason = fmt.Sprintf("success %.3f < %.3f (95 %% CI %.3f–%.3f, n=%d)", st.SuccessRate, c.SLO.MinSuccess, sLo, sHi, st.N)
	case wt.Hi < c.SLO.Quantile:
		p.Reason = fmt.Sprintf("%s TTFT %s > %v: %s", qn, msText(ttft.Value), c.SLO.TTFT, shareText(wt, c.SLO.TTFT))
	case we.Hi < c.SLO.Quantile:
		p.Reason = fmt.Sprintf("%s E2E %s > %v: %s", qn, msText(e2e.Value), c.SLO.E2E, shareText(we, c.SLO.E2E))
	case st.SuccessRate < c.SLO.MinSuccess:
		p.Undecided = true
		p.Reason = fmt.Sprintf("undecided: success %.3f < %.3f but its 95 %% CI %.3f–%.3f (n=%d) holds it", st.SuccessRate, c.SLO.MinSuccess, sLo, sHi, st.N)
	case wt.Lo < c.SLO.Quantile || we.Lo < c.SLO.Quantile:
		p.Undecided = true
		p.Reason = fmt.Sprintf("undecided: %s; %s (the interval holds %s)", shareText(wt, c.SLO.TTFT), shareText(we, c.SLO.E2E), pct(c.SLO.Quantile))
	default:
		p.Pass = true
	}
	p.Uncertain = st.N > 0 && (p.Undecided || q.successUncertain(st))
	return p
}

// shareText is "72.0 % (95 % CI 61.0–83.0 %, 2 trials) within 300ms".
func shareText(w within, bound time.Duration) string {
	return fmt.Sprintf("%.1f %% (95 %% CI %.1f–%.1f %%, %d trials) within %v", 100*w.Share, 100*w.Lo, 100*w.Hi, w.Trials, bound)
}

// successUncertain: requests failed, and the success rule's verdict
// would flip with one failure more or one less (a probe without
// failures has no evidence of any).
func (q *q4) successUncertain(st reqset.Stats) bool {
	m, f, n := q.cfg.SLO.MinSuccess, st.N-st.OK, float64(st.N)
	if m <= 0 || f == 0 {
		return false
	}
	pass := func(f int) bool { return float64(st.N-f)/n >= m }
	return pass(f-1) != pass(f) || pass(f+1) != pass(f)
}

func msText(v float64) string {
	if math.IsInf(v, 1) {
		return "∞ (failed requests)"
	}
	return fmt.Sprintf("%.0f ms", v)
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
