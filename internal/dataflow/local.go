package dataflow

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// LocalOptions configures the in-process engine. The zero value is a
// plain, fast engine: no serialisation, no fault injection.
type LocalOptions struct {
	// Serialize copies every record through the wire format (AppendRecord,
	// DecodeRecord) at each stage boundary, as a distributed engine would.
	// Tests turn it on; it costs throughput.
	Serialize bool
	// Redeliver is the fault-injection probability in [0, 1] that a stage,
	// after processing and acking a record, is handed the same record again
	// (Delivery 2), as a broker does when an ack is lost. A record is
	// redelivered at most once per stage. 0 turns it off.
	Redeliver float64
	// Seed seeds the fault injector.
	Seed uint64
	// ResultsCapacity is the buffer of the Results channel; 0 means
	// DefaultQueueCapacity.
	ResultsCapacity int
	// ExpectedRecords sizes the sink's dedup set up front (a hint; 0 is
	// fine).
	ExpectedRecords int
	// Observer, if set, sees an Event per record per stage.
	Observer Observer
	// Now is the clock for Hop times; nil means the wall clock at NewLocal
	// advanced by the monotonic clock (one clock read instead of two).
	Now func() time.Time
}

// Validate checks the options.
func (o LocalOptions) Validate() error {
	if o.Redeliver < 0 || o.Redeliver > 1 || o.Redeliver != o.Redeliver {
		return fmt.Errorf("local engine: redeliver %v: must be a probability in [0, 1]", o.Redeliver)
	}
	if o.ResultsCapacity < 0 {
		return fmt.Errorf("local engine: results capacity %d: must be ≥ 0", o.ResultsCapacity)
	}
	return nil
}

// Local is the in-process engine: one bounded channel per stage, Parallelism
// worker goroutines per stage, ack after emit, dedup by ID at the sink. A
// Local runs one graph once: Deploy, Serve, then discard it.
type Local struct {
	reg     *Registry
	opts    LocalOptions
	now     func() time.Time
	results chan Record

	deployMu sync.Mutex
	deployed atomic.Bool // set once stages is built
	served   atomic.Bool
	stages   []*stage      // fixed by Deploy
	stop     chan struct{} // closed when Serve ends

	pending   atomic.Int64 // records accepted and not yet acked or delivered
	closed    atomic.Bool  // CloseInput called or run stopped
	drained   chan struct{}
	drainOnce sync.Once

	seenMu sync.Mutex
	seen   map[string]struct{} // IDs delivered this run

	stats localStats
}

var _ Engine = (*Local)(nil)

type stage struct {
	idx  int
	cfg  StageConfig
	op   Operator
	in   chan Record
	next *stage // nil for the last stage
}

type localStats struct {
	submitted, delivered, errors, duplicates, redelivered, timedOut atomic.Int64
}

// Stats counts what a Local engine has done so far.
type Stats struct {
	Submitted   int64 // records accepted by Submit
	Delivered   int64 // records sent to Results, error records included
	Errors      int64 // error records sent to Results
	Duplicates  int64 // records dropped at the sink because their ID was already delivered
	Redelivered int64 // fault-injected redeliveries
	TimedOut    int64 // calls abandoned at their stage timeout
	InFlight    int64 // accepted, not yet acked or delivered (includes outputs blocked in emit)
}

// NewLocal returns an in-process engine that builds operators from reg.
func NewLocal(reg *Registry, opts LocalOptions) (*Local, error) {
	if reg == nil {
		return nil, fmt.Errorf("local engine: nil registry")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	rc := opts.ResultsCapacity
	if rc == 0 {
		rc = DefaultQueueCapacity
	}
	now := opts.Now
	if now == nil {
		now = monotonicClock(time.Now())
	}
	return &Local{
		reg: reg, opts: opts, now: now,
		results: make(chan Record, rc),
		stop:    make(chan struct{}),
		drained: make(chan struct{}),
		seen:    make(map[string]struct{}, max(opts.ExpectedRecords, 0)),
	}, nil
}

// Deploy validates g against the registry, builds one operator per stage
// and allocates the stage queues.
func (l *Local) Deploy(_ context.Context, g Graph) error {
	ops, err := l.reg.Build(g)
	if err != nil {
		return err
	}
	l.deployMu.Lock()
	defer l.deployMu.Unlock()
	if l.deployed.Load() {
		return ErrDeployed
	}
	g = g.Resolved()
	l.stages = make([]*stage, len(g.Stages))
	for i := len(g.Stages) - 1; i >= 0; i-- {
		s := &stage{idx: i, cfg: g.Stages[i], op: ops[i], in: make(chan Record, g.Stages[i].QueueCapacity)}
		if i+1 < len(l.stages) {
			s.next = l.stages[i+1]
		}
		l.stages[i] = s
	}
	l.deployed.Store(true)
	return nil
}

// Serve starts Parallelism workers per stage and blocks until CloseInput
// has been called and every accepted record has been delivered (it then
// returns nil), or ctx is done (it returns ctx.Err()). Results is closed
// when Serve returns.
func (l *Local) Serve(ctx context.Context) error {
	if !l.deployed.Load() {
		return ErrNotDeployed
	}
	if !l.served.CompareAndSwap(false, true) {
		return fmt.Errorf("local engine: Serve called twice")
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, s := range l.stages {
		for w := range s.cfg.Parallelism {
			wg.Go(func() { l.work(runCtx, s, newInjector(l.opts, s.idx, w)) })
		}
	}
	var err error
	select {
	case <-l.drained:
	case <-ctx.Done():
		err = ctx.Err()
	}
	l.closed.Store(true)
	close(l.stop)
	cancel()
	wg.Wait()
	close(l.results)
	l.seenMu.Lock()
	l.seen = nil // the run is over; release the dedup set
	l.seenMu.Unlock()
	return err
}

// Submit offers r to the first stage (see Engine). The engine overwrites
// r.Hops, r.Err and r.Delivery.
func (l *Local) Submit(ctx context.Context, r Record) error {
	if r.ID == "" {
		return ErrEmptyID
	}
	if !l.deployed.Load() {
		return ErrNotDeployed
	}
	l.pending.Add(1)
	if l.closed.Load() {
		l.release()
		return ErrClosed
	}
	first := l.stages[0]
	r.Delivery, r.Err = 1, nil
	r.Hops = make([]Hop, 1, len(l.stages))
	r.Hops[0] = Hop{Stage: first.cfg.Name, Enqueued: l.now()}
	if err := l.enqueue(ctx, first.in, r); err != nil {
		l.release()
		return err
	}
	l.stats.submitted.Add(1)
	return nil
}

// Results returns the channel of results (see Engine).
func (l *Local) Results() <-chan Record { return l.results }

// CloseInput declares the end of the input (see Engine).
func (l *Local) CloseInput() {
	l.closed.Store(true)
	if l.pending.Load() == 0 {
		l.drainOnce.Do(func() { close(l.drained) })
	}
}

// Stats returns a snapshot of the engine's counters.
func (l *Local) Stats() Stats {
	s := &l.stats
	return Stats{
		Submitted: s.submitted.Load(), Delivered: s.delivered.Load(), Errors: s.errors.Load(),
		Duplicates: s.duplicates.Load(), Redelivered: s.redelivered.Load(), TimedOut: s.timedOut.Load(),
		InFlight: l.pending.Load(),
	}
}

// release marks one accepted record as done (acked or delivered) and
// signals the drain when it was the last one after CloseInput.
func (l *Local) release() {
	if l.pending.Add(-1) == 0 && l.closed.Load() {
		l.drainOnce.Do(func() { close(l.drained) })
	}
}

// enqueue puts r on a stage queue, serialising it first in Serialize mode.
func (l *Local) enqueue(ctx context.Context, q chan Record, r Record) error {
	if l.opts.Serialize {
		var err error
		if r, err = roundTrip(r); err != nil {
			return err
		}
	}
	return l.push(ctx, q, r)
}

// push puts r on q, blocking while q is full until ctx is done or the run
// stops.
func (l *Local) push(ctx context.Context, q chan Record, r Record) error {
	select {
	case q <- r:
		return nil
	default:
	}
	select {
	case q <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.stop:
		return ErrClosed
	}
}

// deliver is the sink: it drops a record whose ID was already delivered and
// sends the others to Results, blocking while the caller is behind.
func (l *Local) deliver(ctx context.Context, r Record) error {
	l.seenMu.Lock()
	if l.seen == nil { // the run is over
		l.seenMu.Unlock()
		return ErrClosed
	}
	n := len(l.seen)
	l.seen[r.ID] = struct{}{} // one map operation: test and set
	dup := len(l.seen) == n
	l.seenMu.Unlock()
	if dup {
		l.stats.duplicates.Add(1)
		return nil
	}
	id := r.ID
	if l.opts.Serialize {
		var err error
		if r, err = roundTrip(r); err != nil {
			l.unsee(id)
			return err
		}
	}
	if err := l.push(ctx, l.results, r); err != nil {
		l.unsee(id)
		return err
	}
	l.stats.delivered.Add(1)
	if r.Err != nil {
		l.stats.errors.Add(1)
	}
	return nil
}

func (l *Local) unsee(id string) {
	l.seenMu.Lock()
	delete(l.seen, id)
	l.seenMu.Unlock()
}

func roundTrip(r Record) (Record, error) {
	out, err := DecodeRecord(AppendRecord(make([]byte, 0, 128+len(r.Payload)), r))
	if err != nil {
		return Record{}, fmt.Errorf("serialising record %q: %w", r.ID, err)
	}
	return out, nil
}

// monotonicClock returns a clock that reads only the monotonic clock: base
// plus the time elapsed since base. Its times carry a monotonic reading,
// so differences between them are exact.
func monotonicClock(base time.Time) func() time.Time {
	return func() time.Time { return base.Add(time.Since(base)) }
}
