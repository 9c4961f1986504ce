package q2

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// q2 is Q2 ControlMix.
type q2 struct{ cfg *Config }

var _ workload.Workload = (*q2)(nil)

func (q *q2) Config() workload.Config { return q.cfg }

// mixStream separates the request-mix random stream from the schedule's.
const mixStream = 0x5132_6d69_78 // "Q2mix"

// drawMix draws n request shapes from seed: the same seed gives the same
// mix, whatever the policy or target.
func drawMix(c *Config, seed int64, n int) []traffic.Item {
	rng := rand.New(rand.NewPCG(uint64(seed), mixStream))
	items := make([]traffic.Item, n)
	prios := c.priorities()
	for i := range items {
		typ := protocol.TypeEmbedding
		if rng.Float64() < c.LLMRatio {
			typ = protocol.TypeLLM
		}
		items[i] = traffic.Item{Type: typ, Tenant: traffic.Pick(rng, c.Tenants), Priority: traffic.Pick(rng, prios), Text: rng.Uint64()}
	}
	for _, k := range c.Classes { // each class's lengths: its own or the llm block's
		ls := c.LLM.With(k.LLM)
		ls.FillIf(items, func(it traffic.Item) bool { return it.Priority == k.Priority })
	}
	return items
}

// Plan computes the schedule and mix without sending anything.
func (q *q2) Plan(seed int64) (workload.Plan, error) {
	s, err := load.NewSchedule(q.cfg.Schedule, seed)
	if err != nil {
		return workload.Plan{}, fmt.Errorf("q2.%w", err)
	}
	llm := 0
	mix := drawMix(q.cfg, seed, s.Len())
	traffic.FillTrace(mix, s, q.cfg.LLM.BlockTokens)
	for _, it := range mix {
		if it.Type == protocol.TypeLLM {
			llm++
		}
	}
	tokens := traffic.TokenPlan(mix, q.cfg.LLM.PrefixTokens(), func(it traffic.Item) string { return it.Priority })
	var p workload.Plan
	for r := range q.cfg.Rounds {
		for _, pol := range q.cfg.Policies {
			p.Phases = append(p.Phases, workload.PlannedPhase{Name: phaseName(pol, r, q.cfg.Rounds), Process: q.cfg.Schedule.Process,
				Requests: s.Len(), Rate: s.Rate(), Span: s.Span(), Policy: pol,
				Mix: fmt.Sprintf("llm %d, embedding %d", llm, s.Len()-llm), Tokens: tokens})
		}
	}
	if q.cfg.Rounds > 1 {
		p.Notes = append(p.Notes, "each round draws its own arrivals (seed + round); round 1's mix is shown")
	}
	return p, nil
}

// phaseName is the policy, with ".rN" when there are several rounds.
func phaseName(policy string, round, rounds int) string {
	if rounds == 1 {
		return policy
	}
	return fmt.Sprintf("%s.r%d", policy, round+1)
}

// roundSeed separates the rounds' arrivals.
func roundSeed(seed int64, round int) int64 { return seed + int64(round)*1_000_003 }

// Run sends, round by round, the same schedule and mix once per policy.
func (q *q2) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	out := workload.Outcome{LoadMode: load.ModeOpen}
	kept := &reqset.Set{}
	inner := *env
	inner.Record = func(r record.Request) { kept.Add(r); env.Record(r) }
	var ran []ranPhase
	seq := 0
	qs := newQueueSampler(env.Target, q.cfg.QueueMetric, env.Start)
	for round := range q.cfg.Rounds {
		sched, err := load.NewSchedule(q.cfg.Schedule, roundSeed(env.Seed, round))
		if err != nil {
			return workload.Outcome{}, fmt.Errorf("q2.%w", err)
		}
		mix := drawMix(q.cfg, roundSeed(env.Seed, round), sched.Len())
		traffic.FillTrace(mix, sched, q.cfg.LLM.BlockTokens)
		for _, policy := range q.cfg.Policies {
			if ctx.Err() != nil {
				return q.outcome(out, ran, kept.View(), env, qs), nil
			}
			phase, note, err := q.switchPolicy(ctx, env.Target, policy)
			if errors.Is(err, traffic.ErrTargetFailed) {
				return out, err
			}
			if note != "" && round == 0 {
				out.Notes = append(out.Notes, note)
				fmt.Fprintln(env.Log, "q2:", note)
			}
			if err != nil {
				continue
			}
			name := phase
			if phase == policy {
				name = phaseName(policy, round, q.cfg.Rounds)
			}
			fmt.Fprintf(env.Log, "q2: sub-run %s: %d requests over %s\n", name, sched.Len(), sched.Span())
			kept.Grow(sched.Len())
			ph := q.runPhase(ctx, &inner, name, seq, sched, mix, qs)
			seq += sched.Len()
			out.Phases = append(out.Phases, ph)
			ran = append(ran, ranPhase{Phase: ph, policy: phase, round: round})
			if phase != policy { // the target kept its own policy: one sub-run is all
				return q.outcome(out, ran, kept.View(), env, qs), nil
			}
		}
	}
	return q.outcome(out, ran, kept.View(), env, qs), nil
}

// switchPolicy sets policy on the target (traffic.SwitchPolicy).
func (q *q2) switchPolicy(ctx context.Context, t *target.Target, policy string) (phase, note string, err error) {
	return traffic.SwitchPolicy(ctx, t, policy, q.cfg.Policies)
}

func (q *q2) runPhase(ctx context.Context, env *workload.Env, phase string, seq0 int, s load.Schedule, mix []traffic.Item, qs *queueSampler) summary.Phase {
	d := &load.Driver{MaxInFlight: q.cfg.MaxInFlight, Drain: env.Drain, FineGap: env.FineGap}
	if env.Drain == 0 {
		d.Drain = -1
	}
	if qs != nil { // the target's queue gauge while the sub-run goes
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); qs.run(sctx) }()
		defer func() { stop(); <-done }()
	}
	rep := d.Run(ctx, s, func(hctx context.Context, i int, intended time.Time) {
		env.Sent()
		q.send(hctx, env, phase, seq0+i, mix[i], intended, env.Record)
	})
	return summary.Phase{Name: phase, Start: rep.Start.Sub(env.Start), End: rep.End.Sub(env.Start),
		Scheduled: rep.Scheduled, ScheduleSpan: s.Span(), Interrupted: rep.Interrupted}
}

// send performs one request (every turn of a session) and hands each
// record to emit.
func (q *q2) send(ctx context.Context, env *workload.Env, phase string, seq int, it traffic.Item, intended time.Time, emit func(record.Request)) {
	c := q.cfg
	slo := c.class(it.Priority).SLO
	deadline := slo.EmbeddingE2E
	if it.Type == protocol.TypeLLM {
		deadline = slo.LLME2E
	}
	rec := record.Request{ID: traffic.RequestID(phase, seq), Seq: seq, Kind: "request", Phase: phase}
	traffic.Shapes{LLM: c.LLM, Embedding: c.Embedding}.Do(ctx, env, rec, it, intended, deadline, func(rec record.Request) {
		rec.SLOMet = rec.OK && sloMet(&rec, slo)
		emit(rec)
	})
}

func sloMet(r *record.Request, slo SLO) bool {
	if r.Type == protocol.TypeEmbedding {
		return traffic.Within(r.E2EMs, slo.EmbeddingE2E)
	}
	ttft := r.TTFTMs
	if r.FirstToken == 0 { // not streamed: the first token shows at the end
		ttft = r.E2EMs
	}
	return traffic.Within(ttft, slo.LLMTTFT) && traffic.Within(r.E2EMs, slo.LLME2E)
}
