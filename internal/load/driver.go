package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Load modes, as written in Report.Mode and in run records.
const (
	ModeOpen   = "open-loop"
	ModeClosed = "closed-loop"
)

// Defaults of a zero Driver.
const (
	DefaultDrain         = 5 * time.Second
	DefaultWorkers       = 64
	DefaultProgressEvery = time.Second
	// DefaultFineGap is Driver.FineGap's default: arrivals closer than
	// 1 ms to the previous one (rates above ~1,000/s) are waited for with
	// ApproxSleeper.SleepApprox.
	DefaultFineGap = time.Millisecond
	// DefaultSlack is Driver.Slack's default: close arrivals are at most
	// this late when the process is otherwise idle (plus the kernel's
	// wake-up), against up to a millisecond on the runtime timer alone;
	// the kernel timer fires only for an arrival that late (docs/load.md,
	// issue 39).
	DefaultSlack = 700 * time.Microsecond
	// defaultRearmStep is how far below intended + Slack the pending
	// kernel timer may be before the pacer moves it (see pacer.backstop).
	defaultRearmStep = 100 * time.Microsecond
	// abandonGrace is how long Run still waits for hits after it cancelled
	// their context at the end of the drain; hits that ignore their
	// context longer are counted in Report.Abandoned and left behind.
	abandonGrace = time.Second
)

// Hit performs request i, intended to start at intended. The driver calls
// it at (or as soon as possible after) intended, never delayed by earlier
// hits, each call on its own goroutine. ctx is cancelled when the drain
// after an interruption ends; a hit must return promptly then.
type Hit func(ctx context.Context, i int, intended time.Time)

// Progress is a snapshot of a running Driver, delivered to Driver.Progress.
type Progress struct {
	Elapsed    time.Duration
	Scheduled  int
	Dispatched int
	Completed  int
	InFlight   int
}

// Driver dispatches hits. The zero value is ready to use: real clock,
// unbounded concurrency, DefaultDrain, no progress reports.
type Driver struct {
	Clock         Clock         // nil → PreciseClock{}
	MaxInFlight   int           // 0 = unlimited; when it binds, dispatch waits and the lag shows it
	Drain         time.Duration // after ctx is cancelled, time in-flight hits get before their ctx is cancelled; 0 → DefaultDrain, < 0 → none
	Workers       int           // workers started before the first arrival; 0 → DefaultWorkers (capped by MaxInFlight)
	Spawn         bool          // one new goroutine per arrival instead of the worker pool (for comparison; see docs/load.md)
	Progress      func(Progress)
	ProgressEvery time.Duration // 0 → DefaultProgressEvery
	// FineGap: an arrival less than FineGap after the previous one is
	// waited for with the clock's SleepApprox (when it has one), every
	// other with SleepUntil. A precise wake-up per arrival costs more CPU
	// than the rest of the harness's work at thousands of arrivals a
	// second, while at such rates the runtime's own timer is rarely late
	// (see docs/load.md). 0 → DefaultFineGap; < 0: always SleepUntil.
	FineGap time.Duration
	// Slack bounds how late the runtime timer may leave a close arrival
	// (one waited for with SleepApprox) when the process is otherwise
	// idle: with the real clock, a kernel timer armed at intended + Slack
	// wakes the runtime's poller, which then runs the due timer (alone the
	// poller rounds every sub-millisecond wait up to a whole millisecond).
	// When the process is awake anyway the runtime timer fires first and
	// the kernel timer is moved on, unused. 0 → DefaultSlack; < 0: no
	// kernel timer.
	Slack time.Duration
	// step overrides defaultRearmStep (> 0); a step of Slack is
	// issue 29's rule, kept for the side-by-side benchmark.
	step time.Duration
}

func (d *Driver) rearmStep() time.Duration {
	if d.step > 0 {
		return d.step
	}
	return defaultRearmStep
}

// Report says what a Driver run delivered.
type Report struct {
	Mode        string // ModeOpen or ModeClosed
	Start       time.Time
	End         time.Time
	Scheduled   int
	Dispatched  int
	Completed   int
	Abandoned   int  // hits still running after their ctx was cancelled and a further grace second
	Interrupted bool // ctx was cancelled before the schedule was delivered
	// Lags[i] is the dispatch lag of arrival i (time the hit was called
	// minus its intended time); NotDispatched when it never was. Nil for
	// closed-loop runs, where the lag is zero by definition.
	Lags        []time.Duration
	DispatchLag LagSummary
	PeakWorkers int // goroutines that ran hits at the same time, at most
}

// NotDispatched marks an arrival in Report.Lags that was never dispatched.
const NotDispatched = time.Duration(-1 << 63)

// DeliveredRate is Dispatched per second over the schedule's span (or the
// run's wall time for closed loop).
func (r Report) DeliveredRate(s Schedule) float64 {
	span := s.Span()
	if r.Mode == ModeClosed || span <= 0 {
		span = r.End.Sub(r.Start)
	}
	if span <= 0 {
		return 0
	}
	return float64(r.Dispatched) / span.Seconds()
}

func (d *Driver) clock() Clock {
	if d.Clock == nil {
		return PreciseClock{}
	}
	return d.Clock
}

func (d *Driver) fineGap() time.Duration {
	if d.FineGap == 0 {
		return DefaultFineGap
	}
	return d.FineGap
}

func (d *Driver) drain() time.Duration {
	switch {
	case d.Drain == 0:
		return DefaultDrain
	case d.Drain < 0:
		return 0
	}
	return d.Drain
}

// Run delivers schedule s open loop on an absolute clock: arrival i is
// dispatched at start + s.Offsets[i], whatever earlier hits are doing. When
// ctx is cancelled it stops dispatching, gives in-flight hits Drain, then
// cancels their context and returns with Interrupted set.
func (d *Driver) Run(ctx context.Context, s Schedule, hit Hit) Report {
	clk := d.clock()
	r := &run{clk: clk, hit: hit, lags: make([]atomic.Int64, s.Len()), maxInFlight: d.MaxInFlight}
	for i := range r.lags {
		r.lags[i].Store(int64(NotDispatched))
	}
	r.hitCtx, r.cancelHits = context.WithCancel(context.WithoutCancel(ctx))
	defer r.cancelHits()
	var disp dispatcher
	if d.Spawn {
		disp = r.spawner()
	} else {
		disp = r.newPool(d.workers())
	}
	start := clk.Now()
	stopProgress := d.startProgress(r, start, s.Len())
	pc := d.newPacer(clk)
	defer pc.close()
	for i, off := range s.Offsets {
		t := start.Add(off)
		if pc.wait(ctx, t, i > 0 && off-s.Offsets[i-1] < pc.fine) != nil || ctx.Err() != nil {
			break
		}
		if !disp.dispatch(ctx, job{i: i, intended: t}) {
			break
		}
		r.dispatched.Add(1)
	}
	disp.close()
	rep := d.finish(ctx, r, ModeOpen, start, s.Len())
	stopProgress()
	rep.Lags = make([]time.Duration, len(r.lags))
	for i := range r.lags {
		rep.Lags[i] = time.Duration(r.lags[i].Load())
	}
	rep.DispatchLag = summarize(rep.Lags)
	return rep
}

// RunClosed runs a closed loop: concurrency workers each call hit again as
// soon as their previous hit returned, until count hits were dispatched
// (count <= 0: until ctx is done). intended is the time the hit is called.
func (d *Driver) RunClosed(ctx context.Context, concurrency, count int, hit Hit) Report {
	clk := d.clock()
	r := &run{clk: clk, hit: hit}
	r.hitCtx, r.cancelHits = context.WithCancel(context.WithoutCancel(ctx))
	defer r.cancelHits()
	concurrency = max(concurrency, 1)
	start := clk.Now()
	stopProgress := d.startProgress(r, start, count)
	var next atomic.Int64
	for range concurrency {
		r.wg.Add(1)
		go r.closedWorker(ctx, &next, count)
	}
	rep := d.finish(ctx, r, ModeClosed, start, count)
	stopProgress()
	if count <= 0 {
		rep.Scheduled = rep.Dispatched
		rep.Interrupted = false
	}
	return rep
}

func (r *run) closedWorker(ctx context.Context, next *atomic.Int64, count int) {
	defer r.wg.Done()
	r.enter()
	defer r.leave()
	for ctx.Err() == nil {
		i := int(next.Add(1) - 1)
		if count > 0 && i >= count {
			return
		}
		r.dispatched.Add(1)
		r.hit(r.hitCtx, i, r.clk.Now())
		r.completed.Add(1)
	}
}

func (d *Driver) workers() int {
	n := d.Workers
	if n <= 0 {
		n = DefaultWorkers
	}
	if d.MaxInFlight > 0 {
		n = min(n, d.MaxInFlight)
	}
	return n
}

// finish waits for in-flight hits: all of them when ctx stays alive, else
// for the drain, then cancels them, waits a short grace and gives up.
func (d *Driver) finish(ctx context.Context, r *run, mode string, start time.Time, scheduled int) Report {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	interrupted := false
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done: // finished at the same moment: not interrupted
		default:
			interrupted = true
			d.waitDrain(r, done)
		}
	}
	rep := Report{
		Mode: mode, Start: start, End: r.clk.Now(), Scheduled: scheduled,
		Dispatched: int(r.dispatched.Load()), Completed: int(r.completed.Load()),
		PeakWorkers: int(r.peak.Load()),
	}
	rep.Abandoned = rep.Dispatched - rep.Completed
	rep.Interrupted = interrupted || rep.Dispatched < scheduled
	return rep
}

func (d *Driver) waitDrain(r *run, done <-chan struct{}) {
	if drain := d.drain(); drain > 0 {
		select {
		case <-done:
			return
		case <-r.clk.After(drain):
		}
	}
	r.cancelHits()
	select {
	case <-done:
	case <-r.clk.After(abandonGrace):
	}
}

// startProgress calls d.Progress every ProgressEvery until the returned
// stop function is called (which also delivers a final snapshot).
func (d *Driver) startProgress(r *run, start time.Time, scheduled int) func() {
	if d.Progress == nil {
		return func() {}
	}
	every := d.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	snap := func() Progress {
		disp, comp := int(r.dispatched.Load()), int(r.completed.Load())
		return Progress{Elapsed: r.clk.Now().Sub(start), Scheduled: scheduled,
			Dispatched: disp, Completed: comp, InFlight: disp - comp}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-r.clk.After(every):
				d.Progress(snap())
			}
		}
	})
	return func() { close(stop); wg.Wait(); d.Progress(snap()) }
}
