package traffic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// Stream is one source of requests in a phase (a tenant, a class): its
// arrivals, offset by At from the phase's start, and the drawn item of
// each (len(Items) == Schedule.Len()).
type Stream struct {
	Schedule load.Schedule
	At       time.Duration
	Items    []Item
}

// Merge interleaves streams into one schedule, arrivals in time order
// (ties: stream order), with the item of each arrival.
func Merge(streams ...Stream) (load.Schedule, []Item) {
	type arrival struct {
		at time.Duration
		it Item
	}
	var all []arrival
	var length time.Duration
	for _, s := range streams {
		for i, off := range s.Schedule.Offsets {
			all = append(all, arrival{s.At + off, s.Items[i]})
		}
		length = max(length, s.At+s.Schedule.Span())
	}
	slices.SortStableFunc(all, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	sched := load.Schedule{Offsets: make([]time.Duration, len(all)), Length: length}
	items := make([]Item, len(all))
	for i, a := range all {
		sched.Offsets[i], items[i] = a.at, a.it
	}
	return sched, items
}

// Phase is one open-loop sub-run: a schedule, the item of each arrival,
// the request shapes, each request's deadline and SLO.
type Phase struct {
	Name        string
	Schedule    load.Schedule
	Items       []Item
	Shapes      Shapes
	MaxInFlight int
	// Deadline is the bound sent as X-SLO-Deadline-Ms (0: none).
	Deadline func(Item) time.Duration
	// SLOMet says whether a successful request met its SLO.
	SLOMet func(*record.Request) bool
}

// Run drives the phase, records every request through env (IDs
// "<phase>-<seq>", Seq from seq0) and returns its timing.
// With env.Load set, the phase's load is sent from the fleet's nodes.
func (p Phase) Run(ctx context.Context, env *workload.Env, seq0 int) summary.Phase {
	if env.Load != nil {
		return p.runOnFleet(ctx, env, seq0)
	}
	d := &load.Driver{MaxInFlight: p.MaxInFlight, Drain: env.Drain, FineGap: env.FineGap}
	if env.Drain == 0 {
		d.Drain = -1
	}
	rep := d.Run(ctx, p.Schedule, func(hctx context.Context, i int, intended time.Time) {
		env.Sent()
		it := p.Items[i]
		var dl time.Duration
		if p.Deadline != nil {
			dl = p.Deadline(it)
		}
		rec := record.Request{ID: RequestID(p.Name, seq0+i), Seq: seq0 + i, Kind: "request", Phase: p.Name}
		p.Shapes.Do(hctx, env, rec, it, intended, dl, func(rec record.Request) {
			rec.SLOMet = rec.OK && (p.SLOMet == nil || p.SLOMet(&rec))
			env.Record(rec)
		})
	})
	return summary.Phase{Name: p.Name, Start: rep.Start.Sub(env.Start), End: rep.End.Sub(env.Start),
		Scheduled: rep.Scheduled, ScheduleSpan: p.Schedule.Span(), Interrupted: rep.Interrupted}
}

// LLMSLO is the usual chat SLO: TTFT (a non-streamed chat's first token
// shows at its end) and E2E within their bounds (0: none).
func LLMSLO(r *record.Request, ttft, e2e time.Duration) bool {
	t := r.TTFTMs
	if r.FirstToken == 0 {
		t = r.E2EMs
	}
	return Within(t, ttft) && Within(r.E2EMs, e2e)
}

// SwitchPolicy sets policy on t before a sub-run. A target that fails
// (ErrTargetFailed) ends the run. A target without the
// admin API keeps its own policy: phase is "target" and note says so (the
// caller then runs once). A refused policy is skipped: err is set and
// note says why.
func SwitchPolicy(ctx context.Context, t *target.Target, policy string, all []string) (phase, note string, err error) {
	err = t.SetPolicy(ctx, policy)
	switch {
	case err == nil:
		return policy, "", nil
	case errors.Is(err, target.ErrPolicyUnsupported):
		return "target", fmt.Sprintf("the target cannot switch policy (%s not applied): ran once with the target's own policy as phase \"target\" (%v)",
			strings.Join(all, ", "), err), nil
	}
	var ae *target.AdminError
	if errors.As(err, &ae) && (ae.Status == "" || strings.HasPrefix(ae.Status, "5")) {
		// No answer or a server error: the target is broken, not refusing
		// a policy; measuring on would compare nothing.
		return "", "", fmt.Errorf("%w: %v", ErrTargetFailed, err)
	}
	return "", fmt.Sprintf("policy %s skipped: %v", policy, err), err
}

// ErrTargetFailed is returned by SwitchPolicy when the target's admin API
// failed (no answer, 5xx) rather than refused the policy: the run stops
// with a tool error (exit 1) naming the target's message.
var ErrTargetFailed = errors.New("switching the scheduling policy failed")
