package q3

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

// Phase kinds of a policy.
const (
	phaseAlone     = "alone"
	phaseContended = "contended"
)

// plan is the traffic of one repetition: the victim alone, and victim and
// aggressor merged.
type plan struct {
	alone, contended           load.Schedule
	aloneItems, contendedItems []traffic.Item
}

func (q *q3) draw(seed int64) (plan, error) {
	c := q.cfg
	va, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessPoisson, Rate: c.Victim.Rate, Duration: c.Alone}, seed)
	if err != nil {
		return plan{}, fmt.Errorf("q3.victim: %w", err)
	}
	vc, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessPoisson, Rate: c.Victim.Rate, Duration: c.Contended}, seed+1)
	if err != nil {
		return plan{}, fmt.Errorf("q3.victim: %w", err)
	}
	ag, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessRamp, Rate: c.Aggressor.Rate, RampTo: c.Aggressor.RampTo, Duration: c.Contended}, seed+2)
	if err != nil {
		return plan{}, fmt.Errorf("q3.aggressor: %w", err)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5133))
	victim, aggressor := c.LLM.With(c.Victim.LLM), c.LLM.With(c.Aggressor.LLM)
	items := func(n int, tenant, prio string, ls *traffic.LLMShape) []traffic.Item {
		out := make([]traffic.Item, n)
		for i := range out {
			out[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: tenant, Priority: prio, Text: rng.Uint64()}
		}
		ls.Fill(out)
		return out
	}
	p := plan{alone: va, aloneItems: items(va.Len(), c.Victim.Tenant, c.Victim.Priority, &victim)}
	p.contended, p.contendedItems = traffic.Merge(
		traffic.Stream{Schedule: vc, Items: items(vc.Len(), c.Victim.Tenant, c.Victim.Priority, &victim)},
		traffic.Stream{Schedule: ag, Items: items(ag.Len(), c.Aggressor.Tenant, c.Aggressor.Priority, &aggressor)})
	return p, nil
}

// Plan is two phases per policy.
func (q *q3) Plan(seed int64) (workload.Plan, error) {
	p, err := q.draw(seed)
	if err != nil {
		return workload.Plan{}, err
	}
	agg := 0
	for _, it := range p.contendedItems {
		if it.Tenant == q.cfg.Aggressor.Tenant {
			agg++
		}
	}
	var wp workload.Plan
	for _, pol := range q.cfg.Policies {
		wp.Phases = append(wp.Phases,
			workload.PlannedPhase{Name: pol + "." + phaseAlone, Policy: pol, Process: load.ProcessPoisson, Requests: p.alone.Len(), Rate: p.alone.Rate(), Span: p.alone.Span(),
				Mix: fmt.Sprintf("%s %d", q.cfg.Victim.Tenant, p.alone.Len()), Tokens: traffic.TokenPlan(p.aloneItems, q.cfg.LLM.PrefixTokens(), byTenant)},
			workload.PlannedPhase{Name: pol + "." + phaseContended, Policy: pol, Process: "poisson+ramp", Requests: p.contended.Len(), Rate: p.contended.Rate(), Span: p.contended.Span(),
				Mix:    fmt.Sprintf("%s %d, %s %d (ramp %.0f→%.0f req/s)", q.cfg.Victim.Tenant, p.contended.Len()-agg, q.cfg.Aggressor.Tenant, agg, q.cfg.Aggressor.Rate, q.cfg.Aggressor.RampTo),
				Tokens: traffic.TokenPlan(p.contendedItems, q.cfg.LLM.PrefixTokens(), byTenant)})
	}
	return wp, nil
}

func byTenant(it traffic.Item) string { return it.Tenant }

// Run sends, per policy, the victim alone and then beside the aggressor.
func (q *q3) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	p, err := q.draw(env.Seed)
	if err != nil {
		return workload.Outcome{}, err
	}
	out := workload.Outcome{LoadMode: load.ModeOpen}
	if a := q.cfg.Aggressor; !env.Target.IsEmbedded() && a.MaxConcurrent > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("q3.aggressor.max_concurrent (%d) is the embedded stack's quota; against this target its own admission control applies, if any", a.MaxConcurrent))
	}
	kept := &reqset.Set{}
	inner := *env
	inner.Record = func(r record.Request) { kept.Add(r); env.Record(r) }
	seq := 0
	var ran []string
	for _, policy := range q.cfg.Policies {
		phase, note, err := traffic.SwitchPolicy(ctx, env.Target, policy, q.cfg.Policies)
		if errors.Is(err, traffic.ErrTargetFailed) {
			return out, err
		}
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		if err != nil {
			continue
		}
		for _, step := range []struct {
			kind  string
			s     load.Schedule
			items []traffic.Item
		}{{phaseAlone, p.alone, p.aloneItems}, {phaseContended, p.contended, p.contendedItems}} {
			if ctx.Err() != nil {
				return q.outcome(out, ran, kept.All()), nil
			}
			ph := q.phase(phase+"."+step.kind, step.s, step.items)
			fmt.Fprintf(env.Log, "q3: %s: %d requests over %s\n", ph.Name, step.s.Len(), step.s.Span())
			out.Phases = append(out.Phases, ph.Run(ctx, &inner, seq))
			seq += step.s.Len()
		}
		ran = append(ran, phase)
		if phase != policy {
			break
		}
	}
	return q.outcome(out, ran, kept.All()), nil
}

func (q *q3) phase(name string, s load.Schedule, items []traffic.Item) traffic.Phase {
	c := q.cfg
	return traffic.Phase{Name: name, Schedule: s, Items: items, Shapes: traffic.Shapes{LLM: c.LLM},
		Deadline: func(it traffic.Item) time.Duration {
			if it.Tenant == c.Victim.Tenant {
				return c.SLO.E2E
			}
			return 0
		},
		SLOMet: func(r *record.Request) bool {
			return r.Tenant != c.Victim.Tenant || traffic.LLMSLO(r, c.SLO.TTFT, c.SLO.E2E)
		}}
}
