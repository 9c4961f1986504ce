package drill

import (
	"context"
	"fmt"
	"strings"
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

// Run is one drill as it happened: the capacity probe and the sizing of
// the load, the load's phase, every request, the events and what the
// series say about them.
type Run struct {
	Phase      summary.Phase
	ProbePhase *summary.Phase // the capacity probe's closed-loop phase (nil: no probe)
	Sizing     Sizing
	Records    []record.Request // kind "request", in completion order
	Sent       int
	Events     []Result
	Windows    []series.Window
	Recovery   []EventRecovery // one per performed fault (not per repair or undo)
	Lost       Accounting
	Steady     Steady // before the first fault
	cfg        Config
	planned    []Event // the expanded events, by seq
}

// Drive sends l's traffic to env.Target as one phase named phase while
// cfg's events run beside it, then measures. When l.Utilisation is set it
// first measures the target's capacity (phase "capacity") and offers
// that share of it. The events' offsets count from the start of the load.
// ctx cancelled stops both.
func Drive(ctx context.Context, env *workload.Env, phase string, l Load, cfg Config) (*Run, error) {
	r := &Run{cfg: cfg, planned: Expand(cfg.Events), Sizing: Sizing{Rate: l.Schedule.Rate, Bottleneck: l.bottleneck()}}
	switch {
	case l.Utilisation > 0 && l.Capacity > 0:
		c := Capacity{Rate: l.Capacity, Low: l.Capacity, High: l.Capacity, Saturated: true, UserSet: true}
		l.Schedule.Rate = l.Utilisation * c.Rate
		r.Sizing.Capacity, r.Sizing.Utilisation, r.Sizing.Rate = &c, l.Utilisation, l.Schedule.Rate
	case l.Utilisation > 0:
		c, ph, err := l.probe(ctx, env)
		r.ProbePhase = &ph
		if err != nil {
			return r, fmt.Errorf("capacity probe: %w", err)
		}
		if !c.Saturated {
			r.Sizing.Capacity = &c
			return r, &NoPlateauError{Capacity: c}
		}
		l.Schedule.Rate = l.Utilisation * c.Rate
		r.Sizing.Capacity, r.Sizing.Utilisation, r.Sizing.Rate = &c, l.Utilisation, l.Schedule.Rate
	}
	sched, err := load.NewSchedule(l.Schedule, env.Seed)
	if err != nil {
		return r, fmt.Errorf("schedule: %w", err)
	}
	r.drive(ctx, env, phase, l, sched)
	return r, r.measure()
}

// drive runs the schedule and the timeline side by side.
func (r *Run) drive(ctx context.Context, env *workload.Env, phase string, l Load, sched load.Schedule) {
	mix := l.Items(env.Seed, sched.Len())
	traffic.FillTrace(mix, sched, l.LLM.BlockTokens)
	shapes := traffic.Shapes{LLM: l.LLM, Embedding: l.Embedding}
	var mu sync.Mutex
	var kept []record.Request // hits append here, also after the drain
	var sent atomic.Int64
	tl := Timeline{Events: r.planned, Actor: ActorFor(env.Target, r.cfg.Hooks), Offset: env.Offset}
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
}

// measure computes the windows, the recovery from each performed fault
// and the lost requests.
func (r *Run) measure() error {
	ws, err := series.Compute(r.Records, r.cfg.Series)
	if err != nil {
		return err
	}
	r.Windows = ws
	width := r.cfg.Series.WithDefaults().Width
	var lastSend int64 // the load's end: its last intended send
	for i := range r.Records {
		lastSend = max(lastSend, r.Records[i].IntendedNS)
	}
	for i, e := range r.Events {
		if e.Outcome != OutcomeOK || e.UndoOf != nil || r.planned[i].Repair() {
			continue
		}
		f := series.Fault{StartNS: e.ActualNS, EndNS: e.EndNS, HorizonNS: r.horizon(i)}
		x := EventRecovery{Seq: e.Seq, Action: e.Action, Target: e.Target}
		if undo, ok := r.undoOf(e.Seq); ok && undo.Outcome != OutcomeOK {
			x.Unmeasurable = fmt.Sprintf("the fault never ended: its %s at %.2f s was %s", undo.Action, float64(undo.IntendedNS)/1e9, undo.Outcome)
		}
		if x.Recovery, err = series.RecoverRequestsIn(ws, r.Records, r.cfg.Series, f, r.cfg.Recovery.Rule(width)); err != nil {
			return err
		}
		x.LoadEndNS = int64(r.Phase.End)
		x.censor(ws, f.HorizonNS, lastSend)
		x.CutFromNS = cutFrom(r.Records, e.ActualNS, r.cfg.Recovery.Metric)
		r.Recovery = append(r.Recovery, x)
	}
	r.Lost = Account(r.Sent, r.Records)
	r.Steady, err = r.steady()
	return err
}

// Steady is how well the system held the recovery rule under the load
// before the first fault: the steady state a drill starts from.
type Steady struct {
	Windows, Within int   // windows looked at (on the step grid), and those that kept the rule
	Disjoint        int   // whole window widths in the span
	FromNS, ToNS    int64 // the span looked at
}

// MinSteady is the share of windows before the first fault that must
// keep the recovery rule for a drill to be comparable.
const MinSteady = 0.9

// minSteadyWindows is how many disjoint windows (widths of load from one
// width into the load) a steady-state verdict needs before the first
// fault; fewer makes the run not comparable, at every scale.
const minSteadyWindows = 4

// steady reads the windows from one width into the load until the first
// fault (those ending before it), computed over the requests the fault
// did not touch: a request in flight when the fault struck that failed,
// or whose metric (its first token, or its end) came after the fault's
// start, is the fault's, not the steady state's.
func (r *Run) steady() (Steady, error) {
	width := r.cfg.Series.WithDefaults().Width
	s := Steady{FromNS: int64(r.Phase.Start + width), ToNS: int64(r.Phase.End)}
	if len(r.Recovery) > 0 {
		s.ToNS = r.Recovery[0].EventNS
	}
	rule := r.cfg.Recovery.Rule(width)
	var before []record.Request
	for _, q := range r.Records {
		if !CutBy(&q, s.ToNS, rule.Metric) {
			before = append(before, q)
		}
	}
	ws, err := series.Compute(before, r.cfg.Series)
	if err != nil {
		return s, err
	}
	for _, w := range ws {
		if w.StartNS >= s.FromNS && w.EndNS <= s.ToNS {
			s.Windows++
			if series.Within(w, rule) {
				s.Within++
			}
		}
	}
	// whole widths between one width into the load and the first fault,
	// by the plan (the actual times differ by the timers' jitter)
	s.Disjoint = int((s.ToNS - s.FromNS) / int64(width))
	if lead, _, _ := r.cfg.LeadIn(); lead > 0 && len(r.Recovery) > 0 {
		s.Disjoint = int((lead - width) / width)
	}
	return s, nil
}

// CutBy reports whether request q belongs to a fault at faultNS: it was
// intended before it, ended after it, and either failed or had the point
// metric reads (its first token for a ttft metric, else its end) after it.
func CutBy(q *record.Request, faultNS int64, metric string) bool {
	if q.IntendedNS >= faultNS || q.EndNS < faultNS {
		return false
	}
	if !q.OK {
		return true
	}
	if strings.HasPrefix(metric, "ttft") && q.FirstToken > 0 {
		return q.FirstToken >= faultNS
	}
	return true
}

// notSteady says why the drill did not start from a steady state ("" when
// it did): fewer than minSteadyWindows disjoint windows before the first
// fault (nothing to judge a steady state on), or too few of the windows
// kept the rule.
func (r *Run) notSteady() string {
	s := r.Steady
	if s.Disjoint < minSteadyWindows {
		return fmt.Sprintf("no steady state to compare with: only %.1f s of load (%d windows of %v) before the first fault at %.1f s, %d are needed; start the first event later or shorten drill.series.width",
			float64(s.ToNS-s.FromNS)/1e9, max(s.Disjoint, 0), r.cfg.Series.WithDefaults().Width, float64(s.ToNS)/1e9, minSteadyWindows)
	}
	if float64(s.Within) >= MinSteady*float64(s.Windows) {
		return ""
	}
	return fmt.Sprintf("no steady state before the first fault: %s within %v with no failed request in only %d of %d windows from %.1f s to %.1f s (%.0f %% is required): the system was past its capacity before any fault (the capacity probe overestimated it, or the host was busy); lower load.utilisation or rerun",
		r.cfg.Recovery.Metric, r.cfg.Recovery.Bound, s.Within, s.Windows, float64(s.FromNS)/1e9, float64(s.ToNS)/1e9, 100*MinSteady)
}

// horizon is when the first fault performed after event i began (0: none).
func (r *Run) horizon(i int) int64 {
	for j := i + 1; j < len(r.Events); j++ {
		e := r.Events[j]
		if e.Outcome == OutcomeOK && e.UndoOf == nil && !r.planned[j].Repair() && e.ActualNS > r.Events[i].ActualNS {
			return e.ActualNS
		}
	}
	return 0
}

// undoOf returns the event that undoes fault seq.
func (r *Run) undoOf(seq int) (Result, bool) {
	for _, e := range r.Events {
		if e.UndoOf != nil && *e.UndoOf == seq {
			return e, true
		}
	}
	return Result{}, false
}

// NotPerformed lists the events that did not happen as scheduled: no
// actor could perform them, the run ended first, the attempt failed or
// timed out.
func (r *Run) NotPerformed() []string {
	var out []string
	for _, e := range r.Events {
		if e.Outcome != OutcomeOK {
			out = append(out, fmt.Sprintf("%s %s at %.1fs (%s: %s)", e.Action, e.Target, float64(e.IntendedNS)/1e9, e.Outcome, e.Error))
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

// cutFrom is the earliest intended send among the records a fault at
// faultNS cut (CutBy), 0 when it cut none.
func cutFrom(recs []record.Request, faultNS int64, metric string) int64 {
	var from int64
	for i := range recs {
		if CutBy(&recs[i], faultNS, metric) && (from == 0 || recs[i].IntendedNS < from) {
			from = recs[i].IntendedNS
		}
	}
	return from
}
