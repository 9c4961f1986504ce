package runtime

import (
	"context"
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

// work is one worker of stage s: take a record, serve it, repeat.
func (l *Local) work(ctx context.Context, s *stage, inj *injector) {
	for {
		select {
		case r := <-s.in:
			l.serve(ctx, s, r, inj)
		case <-ctx.Done():
			return
		}
	}
}

// serve runs one delivery of r at stage s: Process, then an error record on
// failure, then (fault injection) a redelivery, then the ack.
func (l *Local) serve(ctx context.Context, s *stage, r Record, inj *injector) {
	hop := &r.Hops[len(r.Hops)-1]
	hop.Started = l.now()
	c := &call{l: l, s: s, in: &r, run: ctx}
	se := l.invoke(ctx, s, c)
	ended := l.now()
	if se != nil && ctx.Err() == nil {
		l.fail(ctx, r, se, ended)
	}
	if l.opts.Observer != nil {
		h := *hop
		h.Ended = ended
		l.opts.Observer(Event{Stage: s.cfg.Name, ID: r.ID, Trace: r.Meta.Trace, Delivery: r.Delivery, Hop: h, Outputs: int(c.n.Load()), Err: se})
	}
	if inj.redeliver(&r) && ctx.Err() == nil {
		l.redeliver(ctx, s, r, inj)
	}
	l.release() // ack: every output has been handed on
}

// invoke calls the operator, turning an error, a panic or (when the stage
// has a timeout) an overrun into a StageError. A call that outlives its
// timeout is abandoned: its context is cancelled and its later emits fail.
func (l *Local) invoke(ctx context.Context, s *stage, c *call) *StageError {
	if s.cfg.Timeout <= 0 {
		defer c.done.Store(true)
		return c.protect(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	done := make(chan *StageError, 1)
	go func() { done <- c.protect(cctx) }()
	select {
	case se := <-done:
		c.done.Store(true)
		return se
	case <-cctx.Done():
		c.done.Store(true)
	}
	select {
	case se := <-done: // it finished just in time after all
		return se
	default:
	}
	l.stats.timedOut.Add(1)
	return s.err(KindTimeout, fmt.Sprintf("no result within the stage timeout of %s", s.cfg.Timeout))
}

func (s *stage) err(kind ErrorKind, msg string) *StageError {
	return &StageError{Stage: s.cfg.Name, Operator: s.cfg.Operator, Kind: kind, Message: msg}
}

// fail delivers the error record that stands for r's outputs.
func (l *Local) fail(ctx context.Context, r Record, se *StageError, ended time.Time) {
	r.Hops = slices.Clone(r.Hops)
	r.Hops[len(r.Hops)-1].Ended = ended
	r.Err = se
	_ = l.deliver(ctx, r) // fails only when the run is stopping
}

// redeliver hands r to stage s again, through its queue when there is room
// and inline otherwise (a worker must not block on its own queue).
func (l *Local) redeliver(ctx context.Context, s *stage, r Record, inj *injector) {
	l.stats.redelivered.Add(1)
	r.Delivery++
	r.Hops = slices.Clone(r.Hops)
	r.Hops[len(r.Hops)-1] = Hop{Stage: s.cfg.Name, Enqueued: l.now()}
	l.pending.Add(1)
	select {
	case s.in <- r:
	default:
		l.serve(ctx, s, r, inj)
	}
}

// call is one delivery of one record to one operator.
type call struct {
	l    *Local
	s    *stage
	in   *Record
	run  context.Context // the run's context: pushes outlive the call's timeout
	n    atomic.Int32    // outputs emitted
	done atomic.Bool     // Process returned or was abandoned
}

func (c *call) protect(ctx context.Context) (se *StageError) {
	defer func() {
		if v := recover(); v != nil {
			se = c.s.err(KindPanic, fmt.Sprintf("%v\n%s", v, stackHead(debug.Stack(), 4096)))
		}
	}()
	if err := c.s.op.Process(ctx, *c.in, c.emit); err != nil {
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
func (c *call) emit(out Record) error {
	if c.done.Load() {
		return ErrEmitClosed
	}
	l, in := c.l, c.in
	now := l.now()
	n := c.n.Add(1) - 1
	if out.ID == "" {
		out.ID = in.ID + "." + strconv.Itoa(int(n))
	}
	if out.Meta == (Metadata{}) {
		out.Meta = in.Meta
	}
	out.Err, out.Delivery = nil, 1
	hops := make([]Hop, len(in.Hops), len(in.Hops)+1)
	copy(hops, in.Hops)
	hops[len(hops)-1].Ended = now
	next := c.s.next
	if next == nil {
		out.Hops = hops
		return l.deliver(c.run, out)
	}
	out.Hops = append(hops, Hop{Stage: next.cfg.Name, Enqueued: now})
	l.pending.Add(1)
	if err := l.push(c.run, next.in, out); err != nil {
		l.release()
		return err
	}
	return nil
}
