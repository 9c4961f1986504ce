package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// shardSpec is what every request of a phase shares, as LoadPlan.Spec.
type shardSpec struct {
	Shapes Shapes `json:"shapes"`
}

// Plan materialises the phase for a LoadFleet: request i has ID
// "<phase>-<seq0+i>", its intended offset, item and deadline.
func (p Phase) Plan(env *workload.Env, seq0 int) (workload.LoadPlan, error) {
	spec, err := json.Marshal(shardSpec{Shapes: p.Shapes})
	if err != nil {
		return workload.LoadPlan{}, fmt.Errorf("phase %s: encoding its shapes: %w", p.Name, err)
	}
	plan := workload.LoadPlan{Phase: p.Name, Base: env.Start, Span: p.Schedule.Span(), Drain: env.Drain, FineGap: env.FineGap, Spec: spec, MaxInFlight: p.MaxInFlight,
		Tokenizer: env.Tokenizer.Spec(), TokenizerSHA256: tokenizer.Fingerprint(env.Synth().Tokenizer()), Requests: make([]workload.PlannedRequest, len(p.Items))}
	if tpl := env.Synth().Template(); tpl != nil {
		plan.ChatTemplate = tpl.Source()
	}
	if env.EmbeddingTokenizer != nil {
		tok, err := env.EmbeddingTokenizer.Get()
		if err != nil {
			return workload.LoadPlan{}, fmt.Errorf("phase %s: embedding_tokenizer: %w", p.Name, err)
		}
		plan.EmbeddingTokenizer, plan.EmbeddingTokenizerSHA256 = env.EmbeddingTokenizer.Spec(), tokenizer.Fingerprint(tok)
	}
	for i, it := range p.Items {
		item, err := json.Marshal(it)
		if err != nil {
			return workload.LoadPlan{}, fmt.Errorf("phase %s: encoding request %d: %w", p.Name, i, err)
		}
		r := workload.PlannedRequest{ID: RequestID(p.Name, seq0+i), Seq: seq0 + i, Offset: p.Schedule.Offsets[i], Item: item}
		if p.Deadline != nil {
			r.Deadline = p.Deadline(it)
		}
		plan.Requests[i] = r
	}
	return plan, nil
}

// runOnFleet sends the phase from env.Load's nodes and records what
// comes back: SLOMet is judged here, where the phase's SLO is.
func (p Phase) runOnFleet(ctx context.Context, env *workload.Env, seq0 int) summary.Phase {
	sp := summary.Phase{Name: p.Name, Scheduled: p.Schedule.Len(), ScheduleSpan: p.Schedule.Span()}
	plan, err := p.Plan(env, seq0)
	if err == nil {
		var lastEnd int64
		var rep workload.LoadReport
		rep, err = env.Load.RunLoad(ctx, plan, func(rec record.Request) {
			env.Sent()
			rec.SLOMet = rec.OK && (p.SLOMet == nil || p.SLOMet(&rec))
			lastEnd = max(lastEnd, rec.EndNS)
			env.Record(rec)
		})
		if rep.Start.IsZero() { // failed before it started
			rep.Start, rep.End = time.Now(), time.Now()
		}
		sp.Start, sp.End = rep.Start.Sub(env.Start), time.Duration(lastEnd)
		if lastEnd == 0 {
			sp.End = rep.End.Sub(env.Start)
		}
		sp.Interrupted = rep.Interrupted
	}
	if err != nil {
		fmt.Fprintf(env.Log, "phase %s: the load fleet failed: %v\n", p.Name, err)
		sp.Interrupted = true
	}
	return sp
}

// Shard is a shard of a phase planned by Phase.Plan, decoded and its
// shapes compiled (a dataset read once) on a fleet node before the
// phase's start instant, so that nothing but sending is left for after.
type Shard struct {
	plan   workload.LoadPlan
	shapes Shapes
	items  []Item
	sched  load.Schedule
}

// PrepareShard decodes plan's shapes and requests and compiles its LLM
// shape, a prompt dataset measured in tok (the run's tokenizer).
func PrepareShard(plan workload.LoadPlan, tok tokenizer.Tokenizer) (*Shard, error) {
	var spec shardSpec
	if err := json.Unmarshal(plan.Spec, &spec); err != nil {
		return nil, fmt.Errorf("phase %s: decoding its shapes: %w", plan.Phase, err)
	}
	if spec.Shapes.LLM.Model != "" { // compiled once here, not per request (a dataset is read once)
		spec.Shapes.LLM.setTokenizer(tokenizer.RefOf(tok.Name(), tok))
		if err := spec.Shapes.LLM.Validate("llm"); err != nil {
			return nil, fmt.Errorf("phase %s: its llm shape: %w", plan.Phase, err)
		}
	}
	s := &Shard{plan: plan, shapes: spec.Shapes, items: make([]Item, len(plan.Requests)),
		sched: load.Schedule{Offsets: make([]time.Duration, len(plan.Requests)), Length: plan.Span}}
	for i, r := range plan.Requests {
		if err := json.Unmarshal(r.Item, &s.items[i]); err != nil {
			return nil, fmt.Errorf("phase %s: request %s: %w", plan.Phase, r.ID, err)
		}
		s.sched.Offsets[i] = r.Offset
	}
	return s, nil
}

// Phase is the name of the shard's phase.
func (s *Shard) Phase() string { return s.plan.Phase }

// Len is the number of requests of the shard.
func (s *Shard) Len() int { return len(s.plan.Requests) }

// Drain is the plan's Env.Drain.
func (s *Shard) Drain() time.Duration { return s.plan.Drain }

// Send sends the shard from this process (a fleet node), called at
// start: each request through Shapes.Send at start + its offset (its
// intended time, from which its lag and latencies count, so a driver that
// began late shows it), each record to env.Record with the plan's ID and
// Seq. SLOMet is left to the coordinator.
func (s *Shard) Send(ctx context.Context, env *workload.Env, start time.Time) load.Report {
	plan := s.plan
	d := &load.Driver{MaxInFlight: plan.MaxInFlight, Drain: plan.Drain, FineGap: plan.FineGap}
	if plan.Drain == 0 {
		d.Drain = -1
	}
	return d.Run(ctx, s.sched, func(hctx context.Context, i int, _ time.Time) {
		env.Sent()
		r := plan.Requests[i]
		rec := record.Request{ID: r.ID, Seq: r.Seq, Kind: "request", Phase: plan.Phase}
		s.shapes.Do(hctx, env, rec, s.items[i], start.Add(r.Offset), r.Deadline, env.Record)
	})
}

// SendShard is PrepareShard, then Send.
func SendShard(ctx context.Context, env *workload.Env, plan workload.LoadPlan, start time.Time) (load.Report, error) {
	s, err := PrepareShard(plan, env.Synth().Tokenizer())
	if err != nil {
		return load.Report{}, err
	}
	return s.Send(ctx, env, start), nil
}
