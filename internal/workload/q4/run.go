package q4

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Plan lists the scales; the probes depend on what the target answers.
func (q *q4) Plan(seed int64) (workload.Plan, error) {
	var p workload.Plan
	c := q.cfg
	for i, n := range c.Scales {
		rate, start := c.StartRate, fmt.Sprintf("first probe at %g req/s, then at slots ÷ service time when the target lists its engines", c.StartRate)
		if i > 0 {
			rate, start = 0, fmt.Sprintf("first probe at %d ÷ %d × rate(%d), known after the first scale", n, c.Scales[0], c.Scales[0])
		}
		ph := workload.PlannedPhase{Name: fmt.Sprintf("engines=%d", n), Process: c.Arrivals,
			Requests: int(rate * c.Probe.Seconds()), Rate: rate, Span: c.MaxProbe * time.Duration(c.MaxProbes),
			Mix: fmt.Sprintf("%s; up to %d trials of %v–%v, bisection to %g %%", start, c.MaxProbes, c.Probe, c.MaxProbe, 100*c.Precision)}
		if len(c.ScaleCommand) == 0 { // the hook resizes whatever the admin API says
			ph.Engines = n
		}
		p.Phases = append(p.Phases, ph)
	}
	p.Notes = append(p.Notes, q.rule(), "probe count, rates and lengths depend on the target: the span is the most the search may send per scale")
	if len(c.ScaleCommand) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("each scale is set by q4.scale_command (%s …), then %v to settle", c.ScaleCommand[0], c.ScaleSettle))
	}
	sample := make([]traffic.Item, 1000) // the shape, fixed during the search, on a sample
	for i := range sample {
		sample[i] = traffic.Item{Type: protocol.TypeLLM, Text: uint64(seed)*1_000_003 + uint64(i)}
	}
	c.LLM.Fill(sample)
	if len(p.Phases) > 0 {
		p.Phases[0].Tokens = traffic.TokenPlan(sample, c.LLM.PrefixTokens(), nil)
	}
	return p, nil
}

// rule states how probes are judged and repeated.
func (q *q4) rule() string {
	c := q.cfg
	s := fmt.Sprintf("a probe of ≥ %d trials passes when the share of requests within TTFT %v and within E2E %v (a failed request never is) has a 95 %% interval wholly ≥ %s — its p%s within the SLO — over trials as independent units (cluster-robust t, never narrower than Wilson), and ≥ %s succeed; it fails when an interval lies wholly below, and is undecided otherwise (it bounds nothing); each trial lasts ≥ %v, ≥ %g × the median service time, ≥ %d requests over the first %d trials, ≥ %v (an overload of %g %% queues past the TTFT bound), ≤ %v",
		minTrials, c.SLO.TTFT, c.SLO.E2E, pct(c.SLO.Quantile), quantileName(c.SLO.Quantile), pct(c.SLO.MinSuccess), c.Probe, c.ServiceMultiple, minSamples(c.SLO.Quantile), minTrials,
		c.overloadLength().Round(100*time.Millisecond), 100*c.Precision, c.MaxProbe)
	if c.Repeats > 0 {
		s += fmt.Sprintf("; an undecided rate (or one whose success rule would flip with one failure more or less) gets %d more trial(s), judged pooled", c.Repeats)
	}
	return s
}

// searcher runs the probes of one repetition.
type searcher struct {
	q       *q4
	env     *workload.Env
	ctx     context.Context
	out     *workload.Outcome
	seq     int
	added   int
	service float64 // median service time, ms, at the lowest passing rate (0: not yet)
	lowest  float64 // that rate
	passed  bool    // a rate has passed (service is from a passing rate)
	slots   int     // active LLM slots the target lists (0: unknown)
	// send runs one trial (s.trial; recomputing, it reads the trial's
	// records back).
	send  func(phase string, rate float64, d time.Duration) ([]record.Request, bool)
	sizes []scaleRecord // each scale searched (scales.jsonl)
}

// Run resizes the pool and searches the frontier at each scale.
func (q *q4) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	out := workload.Outcome{LoadMode: load.ModeOpen}
	out.Notes = append(out.Notes, q.rule(),
		fmt.Sprintf("parallelism %d does not apply to Q4: its probes are open loop (the offered rate is what the search varies; concurrency is the target's)", env.Parallelism))
	s := &searcher{q: q, env: env, ctx: ctx, out: &out}
	s.send = s.trial
	var fs []Frontier
	for i, n := range q.cfg.Scales {
		if ctx.Err() != nil {
			break
		}
		size, err := s.resize(n)
		if err != nil && !errors.Is(err, target.ErrEnginesUnsupported) {
			return out, fmt.Errorf("q4: resizing to %d engines: %w", n, err)
		}
		fs = append(fs, s.frontier(i, fs, scaleRecord{Engines: size, Slots: s.slots}))
		if err != nil { // cannot resize: the target's current size is all
			out.Notes = append(out.Notes, fmt.Sprintf("the target cannot be resized (%v) and q4.scale_command is not set: measured once at its current size, reported as n = 1; efficiency needs a second scale", err))
			break
		}
	}
	q.outcome(&out, fs)
	out.Files = append(out.Files, s.file())
	return out, nil
}

// frontier searches scale i (sc: its size and slots) after those done.
func (s *searcher) frontier(i int, done []Frontier, sc scaleRecord) Frontier {
	s.sizes = append(s.sizes, sc)
	s.slots = sc.Slots
	sr := s.q.search(i, done, sc.Engines)
	if i == 0 {
		sr.Hint = s.hint
	}
	f := sr.Run(func(r float64) (Probe, bool) { return s.probe(sc.Engines, r) })
	f.Engines = sc.Engines
	return f
}

// search is the search of scale i: the first from start_rate (with the
// slot hint), later ones from the first's bracket scaled by n ÷ n₁ —
// and, when that fails, upwards from the highest rate a smaller scale
// passed, which a larger pool should sustain.
func (q *q4) search(i int, done []Frontier, n int) Search {
	c := q.cfg
	s := Search{Start: c.StartRate, Step: c.Growth, Growth: c.Growth, Precision: c.Precision, MaxProbes: c.MaxProbes, MinRate: 0.05}
	if i == 0 || done[0].MaxRate <= 0 || done[0].Engines <= 0 {
		return s
	}
	f1 := done[0]
	s.Start = f1.MaxRate * float64(n) / float64(f1.Engines)
	if f1.Bracketed {
		s.Step = math.Max(f1.FailRate/f1.MaxRate, 1+c.Precision)
	}
	floor := 0.0 // a larger pool sustains at least what a smaller one did: the floor to climb from
	for _, f := range done {
		if f.Engines < n && !f.DriverBound {
			floor = max(floor, f.MaxRate)
		}
	}
	if floor > 0 {
		s.Hint = func(first Probe) float64 {
			if first.Pass {
				return 0
			}
			return floor
		}
	}
	return s
}

// resize makes the target run n active LLM engines and returns n; a
// target that cannot be resized gives 1 (its current size is the unit)
// and the error.
func (s *searcher) resize(n int) (int, error) {
	if len(s.q.cfg.ScaleCommand) > 0 {
		return n, s.runScaleCommand(n)
	}
	t, c := s.env.Target, s.q.cfg
	es, err := t.Engines(s.ctx)
	if err != nil {
		return 1, err
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
	s.slots = s.countSlots()
	fmt.Fprintf(s.env.Log, "q4: %d LLM engines (%d slots): %s\n", n, s.slots, strings.Join(active, ", "))
	return n, nil
}

// countSlots is the active LLM slots the target lists (0: unknown).
func (s *searcher) countSlots() int {
	es, err := s.env.Target.Engines(s.ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if e.Kind == "llm" && e.State == "active" {
			n += e.Slots
		}
	}
	return n
}

// hint is the second probe of the first scale: the target's slots ÷ the
// median service time the first probe measured (its capacity, were every
// slot busy all the time), at most growth² × the first rate (an engine of
// many slots batches them, each step slower: its slots overstate its
// capacity); 0 when either is unknown.
func (s *searcher) hint(first Probe) float64 {
	if s.slots <= 0 || !(first.ServiceMs > 0) {
		return 0
	}
	g := s.q.cfg.Growth
	return min(float64(s.slots)/(first.ServiceMs/1000), first.Rate*g*g)
}
