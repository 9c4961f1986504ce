package q6

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
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// mixStream separates the mix's random stream from the schedule's.
const mixStream = 0x5136_6d69_78 // "Q6mix"

func (q *q6) draw(seed int64) (load.Schedule, []traffic.Item, error) {
	s, err := load.NewSchedule(q.cfg.Schedule, seed)
	if err != nil {
		return load.Schedule{}, nil, fmt.Errorf("q6.%w", err)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), mixStream))
	items := make([]traffic.Item, s.Len())
	for i := range items {
		p := protocol.PriorityLow
		if rng.Float64() < q.cfg.HighShare {
			p = protocol.PriorityHigh
		}
		items[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: "tenant-a", Priority: p, Text: rng.Uint64()}
	}
	high, low := q.cfg.LLM.With(q.cfg.HighLLM), q.cfg.LLM.With(q.cfg.LowLLM)
	high.FillIf(items, func(it traffic.Item) bool { return it.Priority == protocol.PriorityHigh })
	low.FillIf(items, func(it traffic.Item) bool { return it.Priority != protocol.PriorityHigh })
	traffic.FillTrace(items, s, q.cfg.LLM.BlockTokens)
	return s, items, nil
}

// Plan is one phase per policy, the same onoff arrivals in each.
func (q *q6) Plan(seed int64) (workload.Plan, error) {
	s, items, err := q.draw(seed)
	if err != nil {
		return workload.Plan{}, err
	}
	high := 0
	for _, it := range items {
		if it.Priority == protocol.PriorityHigh {
			high++
		}
	}
	var p workload.Plan
	for _, pol := range q.cfg.Policies {
		p.Phases = append(p.Phases, workload.PlannedPhase{Name: pol, Policy: pol, Process: load.ProcessOnOff, Requests: s.Len(),
			Rate: s.Rate(), Span: s.Span(), Mix: fmt.Sprintf("llm high %d, low %d", high, len(items)-high),
			Tokens: traffic.TokenPlan(items, q.cfg.LLM.PrefixTokens(), func(it traffic.Item) string { return it.Priority })})
	}
	sc := q.cfg.Schedule
	p.Notes = append(p.Notes, fmt.Sprintf("bursts of %v at %.0f req/s every %v over a %.0f req/s base; %d bursts per policy",
		sc.BurstLength, sc.BurstRate, sc.BurstPeriod, sc.Rate, len(bursts(sc, 0))))
	return p, nil
}

// Run replays the schedule under each policy.
func (q *q6) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	s, items, err := q.draw(env.Seed)
	if err != nil {
		return workload.Outcome{}, err
	}
	out := workload.Outcome{LoadMode: load.ModeOpen}
	kept := &reqset.Set{}
	inner := *env
	inner.Record = func(r record.Request) { kept.Add(r); env.Record(r) }
	c := q.cfg
	for pi, policy := range c.Policies {
		if ctx.Err() != nil {
			break
		}
		phase, note, err := traffic.SwitchPolicy(ctx, env.Target, policy, c.Policies)
		if errors.Is(err, traffic.ErrTargetFailed) {
			return out, err
		}
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		if err != nil {
			continue
		}
		ph := traffic.Phase{Name: phase, Schedule: s, Items: items, MaxInFlight: c.MaxInFlight,
			Shapes:   traffic.Shapes{LLM: c.LLM},
			Deadline: func(it traffic.Item) time.Duration { return c.slo(it.Priority).E2E },
			SLOMet: func(r *record.Request) bool {
				b := c.slo(r.Priority)
				return traffic.LLMSLO(r, b.TTFT, b.E2E)
			}}
		fmt.Fprintf(env.Log, "q6: policy %s: %d requests over %s\n", phase, s.Len(), s.Span())
		out.Phases = append(out.Phases, ph.Run(ctx, &inner, pi*s.Len()))
		if phase != policy {
			break
		}
	}
	return q.outcome(out, kept.All()), nil
}
