package q2

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
	for i := range items {
		typ := protocol.TypeEmbedding
		if rng.Float64() < c.LLMRatio {
			typ = protocol.TypeLLM
		}
		items[i] = traffic.Item{Type: typ, Tenant: traffic.Pick(rng, c.Tenants), Priority: traffic.Pick(rng, c.Priorities), Text: rng.Uint64()}
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
	for _, it := range drawMix(q.cfg, seed, s.Len()) {
		if it.Type == protocol.TypeLLM {
			llm++
		}
	}
	var p workload.Plan
	for _, pol := range q.cfg.Policies {
		p.Phases = append(p.Phases, workload.PlannedPhase{Name: pol, Process: q.cfg.Schedule.Process,
			Requests: s.Len(), Rate: s.Rate(), Span: s.Span(),
			Mix: fmt.Sprintf("llm %d, embedding %d", llm, s.Len()-llm)})
	}
	return p, nil
}

// Run sends the same schedule and mix once per policy.
func (q *q2) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	sched, err := load.NewSchedule(q.cfg.Schedule, env.Seed)
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q2.%w", err)
	}
	mix := drawMix(q.cfg, env.Seed, sched.Len())
	out := workload.Outcome{LoadMode: load.ModeOpen}
	for pi, policy := range q.cfg.Policies {
		if ctx.Err() != nil {
			break
		}
		phase, note, err := q.switchPolicy(ctx, env.Target, policy)
		if note != "" {
			out.Notes = append(out.Notes, note)
			fmt.Fprintln(env.Log, "q2:", note)
		}
		if err != nil {
			continue
		}
		fmt.Fprintf(env.Log, "q2: sub-run %d/%d: policy %s, %d requests over %s\n", pi+1, len(q.cfg.Policies), phase, sched.Len(), sched.Span())
		out.Phases = append(out.Phases, q.runPhase(ctx, env, phase, pi*sched.Len(), sched, mix))
		if phase != policy { // the target kept its own policy: one sub-run is all
			break
		}
	}
	return out, nil
}

// switchPolicy sets policy on the target. A target without the admin API
// runs with its own policy, as phase "target"; a refused policy is
// skipped with a note.
func (q *q2) switchPolicy(ctx context.Context, t *target.Target, policy string) (phase, note string, err error) {
	err = t.SetPolicy(ctx, policy)
	switch {
	case err == nil:
		return policy, "", nil
	case errors.Is(err, target.ErrPolicyUnsupported):
		return "target", fmt.Sprintf("the target cannot switch policy (%s not applied): ran once with the target's own policy as phase \"target\" (%v)",
			strings.Join(q.cfg.Policies, ", "), err), nil
	}
	return "", fmt.Sprintf("policy %s skipped: %v", policy, err), err
}

func (q *q2) runPhase(ctx context.Context, env *workload.Env, phase string, seq0 int, s load.Schedule, mix []traffic.Item) summary.Phase {
	d := &load.Driver{MaxInFlight: q.cfg.MaxInFlight, Drain: env.Drain}
	if env.Drain == 0 {
		d.Drain = -1
	}
	rep := d.Run(ctx, s, func(hctx context.Context, i int, intended time.Time) {
		env.Sent()
		env.Record(q.send(hctx, env, phase, seq0+i, mix[i], intended))
	})
	return summary.Phase{Name: phase, Start: rep.Start.Sub(env.Start), End: rep.End.Sub(env.Start),
		Scheduled: rep.Scheduled, ScheduleSpan: s.Span(), Interrupted: rep.Interrupted}
}

// send performs one request and returns its record.
func (q *q2) send(ctx context.Context, env *workload.Env, phase string, seq int, it traffic.Item, intended time.Time) record.Request {
	c := q.cfg
	deadline := c.SLO.EmbeddingE2E
	if it.Type == protocol.TypeLLM {
		deadline = c.SLO.LLME2E
	}
	rec := record.Request{ID: fmt.Sprintf("%s-%05d", phase, seq), Seq: seq, Kind: "request", Phase: phase}
	rec = traffic.Shapes{LLM: c.LLM, Embedding: c.Embedding}.Send(ctx, env, rec, it, intended, deadline)
	rec.SLOMet = rec.OK && q.sloMet(&rec)
	return rec
}

func (q *q2) sloMet(r *record.Request) bool {
	if r.Type == protocol.TypeEmbedding {
		return traffic.Within(r.E2EMs, q.cfg.SLO.EmbeddingE2E)
	}
	ttft := r.TTFTMs
	if r.FirstToken == 0 { // not streamed: the first token shows at the end
		ttft = r.E2EMs
	}
	return traffic.Within(ttft, q.cfg.SLO.LLMTTFT) && traffic.Within(r.E2EMs, q.cfg.SLO.LLME2E)
}
