package q4

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Plan lists the scales; the probes depend on what the target answers.
func (q *q4) Plan(seed int64) (workload.Plan, error) {
	var p workload.Plan
	c := q.cfg
	for i, n := range c.Scales {
		rate, start := c.StartRate, fmt.Sprintf("first probe at %g req/s", c.StartRate)
		if i > 0 {
			rate, start = 0, fmt.Sprintf("first probe at %d × rate(%d) ÷ 2, known after the first scale", n, c.Scales[0])
		}
		p.Phases = append(p.Phases, workload.PlannedPhase{Name: fmt.Sprintf("engines=%d", n), Process: load.ProcessPoisson,
			Requests: int(rate * c.Probe.Seconds()), Rate: rate, Span: c.Probe * time.Duration(c.MaxProbes),
			Mix: fmt.Sprintf("%s; up to %d probes of %v, ramp ×%g then bisection to %g", start, c.MaxProbes, c.Probe, c.Growth, c.Precision)})
	}
	sample := make([]traffic.Item, 1000) // the shape, fixed during the search, on a sample
	for i := range sample {
		sample[i] = traffic.Item{Type: protocol.TypeLLM, Text: uint64(seed)*1_000_003 + uint64(i)}
	}
	c.LLM.Fill(sample)
	if len(p.Phases) > 0 {
		p.Phases[0].Tokens = traffic.TokenPlan(sample, c.LLM.PrefixTokens(), nil)
	}
	p.Notes = append(p.Notes, "probe count and rates depend on the target: the span is the most the search may send per scale")
	return p, nil
}

// searcher runs the probes of one repetition.
type searcher struct {
	q     *q4
	env   *workload.Env
	ctx   context.Context
	kept  *reqset.Set
	out   *workload.Outcome
	seq   int
	added int
}

// Run resizes the pool and searches the frontier at each scale.
func (q *q4) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	out := workload.Outcome{LoadMode: load.ModeOpen}
	s := &searcher{q: q, env: env, ctx: ctx, kept: &reqset.Set{}, out: &out}
	var fs []Frontier
	for i, n := range q.cfg.Scales {
		if ctx.Err() != nil {
			break
		}
		size, err := s.resize(n)
		if err != nil && !errors.Is(err, target.ErrEnginesUnsupported) {
			return out, fmt.Errorf("q4: resizing to %d engines: %w", n, err)
		}
		start := q.cfg.StartRate
		if i > 0 && fs[0].MaxRate > 0 {
			start = fs[0].MaxRate * float64(n) / 2
		}
		search := Search{Start: start, Growth: q.cfg.Growth, Precision: q.cfg.Precision, MaxProbes: q.cfg.MaxProbes, MinRate: 0.05}
		f := search.Run(func(r float64) (Probe, bool) { return s.probe(size, r) })
		f.Engines = size
		fs = append(fs, f)
		if err != nil { // no admin API: the target's current size is all
			out.Notes = append(out.Notes, fmt.Sprintf("the target has no engines admin API (%v): measured once at its current size, not at %v", err, q.cfg.Scales))
			break
		}
	}
	q.outcome(&out, fs)
	return out, nil
}

// resize makes the target run n active LLM engines and returns the
// count; without the admin API it returns 0 (unknown) and the error.
func (s *searcher) resize(n int) (int, error) {
	t, c := s.env.Target, s.q.cfg
	es, err := t.Engines(s.ctx)
	if err != nil {
		return 0, err
	}
	var active []string
	for _, e := range es {
		if e.Kind == "llm" && e.State == "active" {
			active = append(active, e.ID)
		}
	}
	for len(active) < n {
		s.added++
		id := fmt.Sprintf("q4-llm-%d", s.added)
		if _, err := t.AddEngine(s.ctx, target.EngineSpec{ID: id, Kind: "llm", Profile: c.Stack.Profile, Slots: c.Stack.LLMSlots}); err != nil {
			return len(active), err
		}
		active = append(active, id)
	}
	for len(active) > n {
		id := active[len(active)-1]
		if err := t.DrainEngine(s.ctx, id); err != nil {
			return len(active), err
		}
		if err := t.RemoveEngine(s.ctx, id); err != nil {
			return len(active), err
		}
		active = active[:len(active)-1]
	}
	fmt.Fprintf(s.env.Log, "q4: %d LLM engines: %s\n", n, strings.Join(active, ", "))
	return n, nil
}

// probe sends one Poisson trial at rate and judges it.
func (s *searcher) probe(engines int, rate float64) (Probe, bool) {
	c := s.q.cfg
	name := fmt.Sprintf("n%d@%.2f", engines, rate)
	seed := s.env.Seed + int64(s.seq)
	sched, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessPoisson, Rate: rate, Duration: c.Probe}, seed)
	if err != nil || sched.Len() == 0 {
		return Probe{Rate: rate, Phase: name, Reason: "no arrivals at this rate and probe length"}, s.ctx.Err() == nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5134))
	items := make([]traffic.Item, sched.Len())
	for i := range items {
		items[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: "tenant-a", Priority: protocol.PriorityNormal, Text: rng.Uint64()}
	}
	c.LLM.Fill(items) // the same shape at every rate and scale of the search
	traffic.FillTrace(items, sched, c.LLM.BlockTokens)
	var mine reqset.Set
	inner := *s.env
	inner.Record = func(r record.Request) { mine.Add(r); s.env.Record(r) }
	ph := traffic.Phase{Name: name, Schedule: sched, Items: items, Shapes: traffic.Shapes{LLM: c.LLM},
		Deadline: func(traffic.Item) time.Duration { return c.SLO.E2E },
		SLOMet:   func(r *record.Request) bool { return traffic.LLMSLO(r, c.SLO.TTFT, c.SLO.E2E) }}
	sp := ph.Run(s.ctx, &inner, s.seq)
	s.seq += sched.Len()
	s.out.Phases = append(s.out.Phases, sp)
	if sp.Interrupted {
		return Probe{}, false
	}
	return s.q.judge(rate, name, mine.All(), sp.Duration()), true
}

// judge decides a probe from its records: driver first, then the SLO.
func (q *q4) judge(rate float64, name string, rs []record.Request, d time.Duration) Probe {
	c := q.cfg
	st := reqset.Measure(rs)
	lags := make([]float64, len(rs))
	for i := range rs {
		lags[i] = rs[i].LagMs
	}
	p := Probe{Rate: rate, Phase: name, Requests: st.N, Success: st.SuccessRate, Goodput: st.Goodput(d),
		TTFTP99: st.TTFTP99, E2EP99: st.E2EP99, LagP99: reqset.Quantile(lags, 0.99)}
	bound := float64(c.MaxDriverLag) / float64(time.Millisecond)
	switch {
	case p.LagP99 > bound:
		p.DriverBound, p.Reason = true, fmt.Sprintf("driver lag p99 %.1f ms > %.1f ms", p.LagP99, bound)
	case st.SuccessRate < c.SLO.MinSuccess:
		p.Reason = fmt.Sprintf("success %.3f < %.3f", st.SuccessRate, c.SLO.MinSuccess)
	case !traffic.Within(st.TTFTP99, c.SLO.TTFT) || st.OK == 0:
		p.Reason = fmt.Sprintf("p99 TTFT %.0f ms > %v", st.TTFTP99, c.SLO.TTFT)
	case !traffic.Within(st.E2EP99, c.SLO.E2E):
		p.Reason = fmt.Sprintf("p99 E2E %.0f ms > %v", st.E2EP99, c.SLO.E2E)
	default:
		p.Pass = true
	}
	return p
}
