package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
)

// Request types of Q2.
const (
	TypeLLM       = "llm"
	TypeEmbedding = "embedding"
)

// q2 is Q2 ControlMix.
type q2 struct{ cfg *Q2Config }

var _ Workload = (*q2)(nil)

func (q *q2) Config() Config { return q.cfg }

// mixItem is the drawn shape of one request.
type mixItem struct {
	Type, Tenant, Priority string
	Text                   uint64 // seed of the request's text
}

// mixStream separates the request-mix random stream from the schedule's.
const mixStream = 0x5132_6d69_78 // "Q2mix"

// drawMix draws n request shapes from seed: the same seed gives the same
// mix, whatever the policy or target.
func drawMix(c *Q2Config, seed int64, n int) []mixItem {
	rng := rand.New(rand.NewPCG(uint64(seed), mixStream))
	items := make([]mixItem, n)
	for i := range items {
		typ := TypeEmbedding
		if rng.Float64() < c.LLMRatio {
			typ = TypeLLM
		}
		items[i] = mixItem{Type: typ, Tenant: pick(rng, c.Tenants), Priority: pick(rng, c.Priorities), Text: rng.Uint64()}
	}
	return items
}

func pick(rng *rand.Rand, ws []Weighted) string {
	total := 0.0
	for _, w := range ws {
		total += w.Weight
	}
	u := rng.Float64() * total
	for _, w := range ws {
		if u < w.Weight {
			return w.Name
		}
		u -= w.Weight
	}
	return ws[len(ws)-1].Name
}

// Plan computes the schedule and mix without sending anything.
func (q *q2) Plan(seed int64) (Plan, error) {
	s, err := load.NewSchedule(q.cfg.Schedule, seed)
	if err != nil {
		return Plan{}, fmt.Errorf("q2.%w", err)
	}
	llm := 0
	for _, it := range drawMix(q.cfg, seed, s.Len()) {
		if it.Type == TypeLLM {
			llm++
		}
	}
	var p Plan
	for _, pol := range q.cfg.Policies {
		p.Phases = append(p.Phases, PlannedPhase{Name: pol, Process: q.cfg.Schedule.Process,
			Requests: s.Len(), Rate: s.Rate(), Span: s.Span(),
			Mix: fmt.Sprintf("llm %d, embedding %d", llm, s.Len()-llm)})
	}
	return p, nil
}

// Run sends the same schedule and mix once per policy.
func (q *q2) Run(ctx context.Context, env *Env) (Outcome, error) {
	sched, err := load.NewSchedule(q.cfg.Schedule, env.Seed)
	if err != nil {
		return Outcome{}, fmt.Errorf("q2.%w", err)
	}
	mix := drawMix(q.cfg, env.Seed, sched.Len())
	out := Outcome{LoadMode: load.ModeOpen}
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

func (q *q2) runPhase(ctx context.Context, env *Env, phase string, seq0 int, s load.Schedule, mix []mixItem) summary.Phase {
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
func (q *q2) send(ctx context.Context, env *Env, phase string, seq int, it mixItem, intended time.Time) record.Request {
	c := q.cfg
	hdr := http.Header{}
	hdr.Set("X-Tenant-Id", it.Tenant)
	hdr.Set("X-Request-Priority", it.Priority)
	hdr.Set("X-Request-Type", it.Type)
	rec := record.Request{ID: fmt.Sprintf("%s-%05d", phase, seq), Seq: seq, Kind: "request", Type: it.Type,
		Phase: phase, Tenant: it.Tenant, Priority: it.Priority}
	var res openai.Result
	if it.Type == TypeLLM {
		setDeadline(hdr, c.SLO.LLME2E)
		rec.Model = c.LLM.Model
		res = env.Target.Client().Chat(ctx, openai.ChatRequest{Model: c.LLM.Model, MaxTokens: c.LLM.MaxTokens,
			Messages: []openai.Message{{Role: "user", Content: words(it.Text, c.LLM.PromptWords)}},
			Stream:   c.LLM.Stream, IncludeUsage: c.LLM.Stream, Header: hdr})
	} else {
		setDeadline(hdr, c.SLO.EmbeddingE2E)
		rec.Model = c.Embedding.Model
		in := make([]string, c.Embedding.Inputs)
		for k := range in {
			in[k] = words(it.Text+uint64(k), c.Embedding.Words)
		}
		res = env.Target.Client().Embed(ctx, openai.EmbedRequest{Model: c.Embedding.Model, Input: in, Header: hdr})
	}
	fillTiming(&rec, env, intended, &res)
	rec.SLOMet = rec.OK && q.sloMet(&rec)
	return rec
}

// setDeadline sets X-SLO-Deadline-Ms to bound, when there is one.
func setDeadline(hdr http.Header, bound time.Duration) {
	if ms := deadlineMs(bound); ms != "" {
		hdr.Set("X-SLO-Deadline-Ms", ms)
	}
}

// deadlineMs is bound in whole milliseconds rounded up ("" for no bound):
// truncating would announce a tighter deadline, or "0" (none), for a
// sub-millisecond bound.
func deadlineMs(bound time.Duration) string {
	if bound <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((bound+time.Millisecond-1)/time.Millisecond), 10)
}

func (q *q2) sloMet(r *record.Request) bool {
	within := func(ms float64, bound time.Duration) bool {
		return bound <= 0 || ms <= float64(bound)/float64(time.Millisecond)
	}
	if r.Type == TypeEmbedding {
		return within(r.E2EMs, q.cfg.SLO.EmbeddingE2E)
	}
	ttft := r.TTFTMs
	if r.FirstToken == 0 { // not streamed: the first token shows at the end
		ttft = r.E2EMs
	}
	return within(ttft, q.cfg.SLO.LLMTTFT) && within(r.E2EMs, q.cfg.SLO.LLME2E)
}
