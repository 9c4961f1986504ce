package drill

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Run is one drill as it happened: the load's phase, every request, the
// events and what the series say about them.
type Run struct {
	Phase    summary.Phase
	Records  []record.Request // kind "request", in completion order
	Sent     int
	Events   []Result
	Windows  []series.Window
	Recovery []EventRecovery // one per performed event
	Lost     Accounting
	cfg      Config
}

// Drive sends l's traffic to env.Target as one phase named phase while
// cfg's events run beside it, then measures. ctx cancelled stops both.
func Drive(ctx context.Context, env *workload.Env, phase string, l Load, cfg Config) (*Run, error) {
	sched, err := load.NewSchedule(l.Schedule, env.Seed)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	mix := l.Items(env.Seed, sched.Len())
	traffic.FillTrace(mix, sched, l.LLM.BlockTokens)
	shapes := traffic.Shapes{LLM: l.LLM, Embedding: l.Embedding}
	r := &Run{cfg: cfg}
	var mu sync.Mutex
	var kept []record.Request // hits append here, also after the drain
	var sent atomic.Int64
	tl := Timeline{Events: Expand(cfg.Events), Actor: ActorFor(env.Target, cfg.Hooks), Offset: env.Offset}
	tctx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	events := make(chan []Result, 1)
	start := time.Now()
	go func() { events <- tl.Run(tctx, start) }()
	d := &load.Driver{MaxInFlight: l.MaxInFlight, Drain: env.Drain, FineGap: env.FineGap}
	if env.Drain == 0 {
		d.Drain = -1
	}
	rep := d.Run(ctx, sched, func(hctx context.Context, i int, intended time.Time) {
		sent.Add(1)
		env.Sent()
		rec := record.Request{ID: fmt.Sprintf("%s-%05d", phase, i), Seq: i, Kind: "request", Phase: phase}
		shapes.Do(hctx, env, rec, mix[i], intended, l.deadline(mix[i].Type), func(rec record.Request) {
			rec.SLOMet = l.sloMet(&rec)
			mu.Lock()
			kept = append(kept, rec)
			mu.Unlock()
			env.Record(rec)
		})
	})
	stopEvents()
	r.Events = <-events
	mu.Lock() // a hit past the drain may still append to kept, not to r.Records
	r.Records = append([]record.Request(nil), kept...)
	mu.Unlock()
	r.Sent = int(sent.Load())
	r.Phase = summary.Phase{Name: phase, Start: rep.Start.Sub(env.Start), End: rep.End.Sub(env.Start),
		Scheduled: rep.Scheduled, ScheduleSpan: sched.Span(), Interrupted: rep.Interrupted}
	return r, r.measure()
}

// measure computes the windows, the recovery after each event and the
// lost requests.
func (r *Run) measure() error {
	ws, err := series.Compute(r.Records, r.cfg.Series)
	if err != nil {
		return err
	}
	r.Windows = ws
	hold := r.cfg.Recovery.Hold
	for _, e := range r.Events {
		if e.Outcome != OutcomeOK {
			continue
		}
		rec := series.RecoveryAfter(ws, e.ActualNS, r.cfg.Recovery.Metric, ms(r.cfg.Recovery.Bound), hold)
		r.Recovery = append(r.Recovery, newEventRecovery(e, rec))
	}
	r.Lost = Account(r.Sent, r.Records)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// NotPerformed lists the events that did not happen as scheduled: no
// actor could perform them, the run ended first, or the attempt failed.
func (r *Run) NotPerformed() []string {
	var out []string
	for _, e := range r.Events {
		if e.Outcome != OutcomeOK {
			out = append(out, fmt.Sprintf("%s %s at %.1fs (%s)", e.Action, e.Target, float64(e.IntendedNS)/1e9, e.Error))
		}
	}
	return out
}

// Event returns the result of the first event with action on target.
func (r *Run) Event(action, target string) (Result, bool) {
	for _, e := range r.Events {
		if e.Action == action && e.Target == target {
			return e, true
		}
	}
	return Result{}, false
}

// RecoveryOf returns the recovery measured after event seq.
func (r *Run) RecoveryOf(seq int) (EventRecovery, bool) {
	for _, x := range r.Recovery {
		if x.Seq == seq {
			return x, true
		}
	}
	return EventRecovery{}, false
}
