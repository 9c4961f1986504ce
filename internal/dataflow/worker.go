package dataflow

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// injector decides fault-injected redeliveries for one worker; nil when
// fault injection is off.
type injector struct {
	p   float64
	rng *rand.Rand
}

func newInjector(o LocalOptions, stage, worker int) *injector {
	if o.Redeliver == 0 {
		return nil
	}
	return &injector{p: o.Redeliver, rng: rand.New(rand.NewPCG(o.Seed, uint64(stage)<<32|uint64(worker)))}
}

func (f *injector) redeliver(r *Record) bool {
	return f != nil && r.Delivery == 1 && f.rng.Float64() < f.p
}

// worker is one worker goroutine of a stage. Stages without a timeout
// reuse one call value per worker, so the hot path does not allocate it.
type worker struct {
	l    *Local
	s    *stage
	inj  *injector
	cur  Record
	c    call
	emit func(Record) error // w.c.emit, bound once
}

// work is one worker of stage s: take a record, serve it, repeat.
func (l *Local) work(ctx context.Context, s *stage, inj *injector) {
	w := &worker{l: l, s: s, inj: inj}
	w.c = call{l: l, s: s, in: &w.cur, run: ctx, inplace: true}
	w.emit = w.c.emit
	for {
		select { // fast path: no lock on the shared done channel
		case r := <-s.in:
			w.serve(ctx, r)
			continue
		default:
		}
		select {
		case r := <-s.in:
			w.serve(ctx, r)
		case <-ctx.Done():
			return
		}
	}
}

// serve runs one delivery of r at the worker's stage: Process, then an
// error record on failure, then (fault injection) a redelivery, then the
// ack.
func (w *worker) serve(ctx context.Context, r Record) {
	l, s := w.l, w.s
	r.Hops[len(r.Hops)-1].Started = l.now()
	var se *StageError
	var outputs int32
	if s.cfg.Timeout <= 0 {
		w.cur = r
		c := &w.c
		c.n.Store(0)
		c.done.Store(false)
		se = l.invoke(ctx, s, c, w.emit)
		outputs = c.n.Load()
	} else {
		se, outputs = w.invokeTimed(ctx, r)
	}
	if se != nil || l.opts.Observer != nil {
		w.finish(ctx, r, se, int(outputs))
	}
	if w.inj.redeliver(&r) && ctx.Err() == nil {
		w.redeliver(ctx, r)
	}
	l.release() // ack: every output has been handed on
}

// invokeTimed runs one call with its own call value, which an abandoned
// operator may keep using after the worker has moved on.
func (w *worker) invokeTimed(ctx context.Context, r Record) (*StageError, int32) {
	c := &call{l: w.l, s: w.s, in: &r, run: ctx}
	se := w.l.invoke(ctx, w.s, c, nil)
	return se, c.n.Load()
}

// finish reports a served record: the error record on failure, the event
// to the observer.
func (w *worker) finish(ctx context.Context, r Record, se *StageError, outputs int) {
	l := w.l
	ended := l.now()
	h := r.Hops[len(r.Hops)-1]
	h.Ended = ended
	if se != nil && ctx.Err() == nil {
		l.fail(ctx, r, se, ended)
	}
	if l.opts.Observer != nil {
		l.opts.Observer(Event{Stage: w.s.cfg.Name, ID: r.ID, Trace: r.Meta.Trace, Delivery: r.Delivery, Hop: h, Outputs: outputs, Err: se})
	}
}

// invoke calls the operator, turning an error, a panic or (when the stage
// has a timeout) an overrun into a StageError. A call that outlives its
// timeout is abandoned: its context is cancelled and its later emits fail.
func (l *Local) invoke(ctx context.Context, s *stage, c *call, emit func(Record) error) *StageError {
	if s.cfg.Timeout <= 0 {
		defer c.done.Store(true)
		return c.protect(ctx, emit)
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	done := make(chan *StageError, 1)
	go func() { done <- c.protect(cctx, c.emit) }()
	var se *StageError
	abandoned := false
	select {
	case se = <-done:
	case <-cctx.Done():
		select {
		case se = <-done: // it finished just in time after all
		default:
			abandoned = true
		}
	}
	c.done.Store(true)
	timedOut := ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded)
	if timedOut && abandoned { // not a call abandoned because the run stopped
		l.stats.timedOut.Add(1)
	}
	if timedOut && (abandoned || se != nil) {
		// Abandoned, or failed because its deadline passed (an operator
		// returning ctx.Err()): either way, a timeout.
		se = s.err(KindTimeout, fmt.Sprintf("no result within the stage timeout of %s", s.cfg.Timeout))
	}
	return se
}

func (s *stage) err(kind ErrorKind, msg string) *StageError {
	return &StageError{Stage: s.cfg.Name, Operator: s.cfg.Operator, Kind: kind, Message: msg}
}

// fail delivers the error record that stands for r's outputs.
func (l *Local) fail(ctx context.Context, r Record, se *StageError, ended time.Time) {
	r.Hops = slices.Clone(r.Hops) // the first output may share the array
	r.Hops[len(r.Hops)-1].Ended = ended
	r.Err = se
	_ = l.deliver(ctx, r) // fails only when the run is stopping
}

// redeliver hands r to stage s again, through its queue when there is room
// and inline otherwise (a worker must not block on its own queue).
func (w *worker) redeliver(ctx context.Context, r Record) {
	l, s := w.l, w.s
	l.stats.redelivered.Add(1)
	r.Delivery++
	r.Hops = append(make([]Hop, 0, cap(r.Hops)), r.Hops...)
	r.Hops[len(r.Hops)-1] = Hop{Stage: s.cfg.Name, Enqueued: l.now()}
	if l.opts.Serialize {
		var err error
		if r, err = roundTrip(r); err != nil {
			return // cannot happen for a record the engine encoded itself
		}
	}
	l.pending.Add(1)
	select {
	case s.in <- r:
	default:
		w.serve(ctx, r)
	}
}

// call is one delivery of one record to one operator.
type call struct {
	l   *Local
	s   *stage
	in  *Record
	run context.Context // the run's context: pushes outlive the call's timeout
	// inplace lets the first emit extend the input's Hops array instead of
	// copying it; only safe when emit runs on the worker's goroutine.
	inplace bool
	n       atomic.Int32 // outputs emitted
	done    atomic.Bool  // Process returned or was abandoned
}

func (c *call) protect(ctx context.Context, emit func(Record) error) (se *StageError) {
	defer func() {
		if v := recover(); v != nil {
			se = c.s.err(KindPanic, fmt.Sprintf("%v\n%s", v, stackHead(debug.Stack(), 4096)))
		}
	}()
	if err := c.s.op.Process(ctx, *c.in, emit); err != nil {
		return c.s.err(KindError, err.Error())
	}
	return nil
}

func stackHead(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// emit hands one output of the call to the next stage, or to the sink
// after the last stage.
//
// The output counts as in flight (pending) from before the done check
// until it is handed on, so the run cannot drain while an abandoned call's
// output is still blocked on a full queue or Results: its error record was
// dropped as a duplicate of that output, which must arrive.
func (c *call) emit(out Record) error {
	l, in := c.l, c.in
	l.pending.Add(1)
	if c.done.Load() {
		l.release()
		return ErrEmitClosed
	}
	now := l.now()
	n := c.n.Add(1) - 1
	if out.ID == "" {
		out.ID = in.ID + "." + strconv.Itoa(int(n))
	}
	if out.Meta == (Metadata{}) {
		out.Meta = in.Meta
	}
	out.Err, out.Delivery = nil, 1
	var hops []Hop
	if n == 0 && c.inplace {
		hops = in.Hops // the input's array has room for every stage's hop
	} else {
		hops = append(make([]Hop, 0, len(in.Hops)+len(c.l.stages)-c.s.idx), in.Hops...)
	}
	hops[len(hops)-1].Ended = now
	next := c.s.next
	if next == nil {
		out.Hops = hops
		err := l.deliver(c.run, out)
		l.release()
		return err
	}
	out.Hops = append(hops, Hop{Stage: next.cfg.Name, Enqueued: now})
	if err := l.enqueue(c.run, next.in, out); err != nil {
		l.release()
		return err
	}
	return nil
}
