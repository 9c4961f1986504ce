package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// Stats counts what the run has done, as seen by the coordinator.
type Stats struct {
	dataflow.Stats
	// DeadLettered counts records given up and delivered to Results as
	// KindDeadLetter error records. A record the server gave up while a
	// live worker was still finishing it (its ack wait ran out on the last
	// allowed delivery) is not counted when that worker's result reached
	// the sink first: the first result of a record is its result.
	DeadLettered int64
	// StreamDuplicates counts outputs of this process's workers that a
	// stage stream dropped by Nats-Msg-Id (republished after a redelivery).
	StreamDuplicates int64
	// Workers is how many worker processes joined.
	Workers int
	// Rejected counts messages of the graph that were not sealed with the
	// run key (forged, altered, or from another run): dropped unread at
	// the sink, or at a stage by a worker that reported it. Any makes the
	// run's records suspect: the caller treats it as an integrity failure.
	Rejected int64
}

type sinkStats struct {
	delivered, errors, duplicates, dead, rejected atomic.Int64
}

// serverCounts are the run's counts as the JetStream server keeps them,
// across every worker wherever it runs: read from the stage consumers'
// state before the streams go.
type serverCounts struct {
	read        atomic.Bool
	redelivered atomic.Int64
}

// Stats returns a snapshot of the run's counters. Once the run has been
// served, Redelivered is the server's (every worker's redeliveries, from
// the stage consumers' state); before that, and TimedOut always, it
// counts this process's workers only. DeadLettered is the sink's: every
// dead letter comes back as a result.
func (e *Engine) Stats() Stats {
	sub := e.submitted.Load()
	done := int64(e.credits.Load() / unit)
	s := Stats{
		Stats: dataflow.Stats{
			Submitted: sub, Delivered: e.sink.delivered.Load(), Errors: e.sink.errors.Load(),
			Duplicates: e.sink.duplicates.Load(), Redelivered: e.local.redelivered.Load(),
			TimedOut: e.local.timedOut.Load(), InFlight: max(sub-done, 0),
		},
		DeadLettered:     e.sink.dead.Load(),
		StreamDuplicates: e.local.streamDuplicates.Load(),
		Workers:          e.workers.count(),
		Rejected:         e.sink.rejected.Load(), // a stage's rejections come back as kindRej notices
	}
	if e.server.read.Load() {
		s.Redelivered = max(s.Redelivered, e.server.redelivered.Load())
	}
	return s
}

// readServerCounts reads the redeliveries of every stage consumer (its
// deliveries minus the stream messages it delivered: the server counts
// each redelivery in the consumer sequence only). A count it cannot read
// stays the local one.
func (e *Engine) readServerCounts(ctx context.Context) {
	var redelivered int64
	for i := range e.graph.Stages {
		c, err := e.js.Consumer(ctx, e.n.stageStream(i), e.n.stageConsumer(i))
		if err != nil {
			return
		}
		info, err := c.Info(ctx)
		if err != nil {
			return
		}
		redelivered += int64(info.Delivered.Consumer) - int64(info.Delivered.Stream)
	}
	e.server.redelivered.Store(max(redelivered, 0))
	e.server.read.Store(true)
}

// Serve runs the sink and, unless RemoteOnly, this process's workers for
// every stage, until CloseInput has been called and every submitted
// record's credit is back (nil), or ctx is done (ctx.Err()). Then it tells
// joined workers the run is over, closes Results and deletes the run's
// streams (unless KeepStreams).
func (e *Engine) Serve(ctx context.Context) error {
	if !e.deployed.Load() {
		return dataflow.ErrNotDeployed
	}
	if !e.served.CompareAndSwap(false, true) {
		return errors.New("jetstream engine: Serve called twice")
	}
	sinkCtx, stopSink := context.WithCancel(ctx)
	var sinkDone sync.WaitGroup
	sinkErr := make(chan error, 1)
	sinkDone.Go(func() { sinkErr <- e.runSink(sinkCtx) })
	stopLocal := e.serveLocal(ctx)
	var err error
	select {
	case <-e.drained:
	case <-ctx.Done():
		err = ctx.Err()
	case err = <-sinkErr:
	}
	e.closed.Store(true)
	e.stopRun()
	stopSink()
	stopLocal(err != nil)
	sinkDone.Wait()
	close(e.results)
	_ = e.nc.Publish(e.n.endSubject(), nil)
	_ = e.nc.Flush()
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	e.readServerCounts(dctx)
	if !e.cfg.KeepStreams {
		if derr := e.deleteStreams(dctx); derr != nil && err == nil {
			err = fmt.Errorf("deleting the run's streams: %w", derr)
		}
	}
	return err
}

// serveLocal runs this process's workers unless RemoteOnly. The returned
// function stops them: after a drain it lets them finish acking (and
// report to the observer) for up to localGrace; after an abort at once.
func (e *Engine) serveLocal(ctx context.Context) (stop func(abort bool)) {
	if e.cfg.RemoteOnly {
		return func(bool) {}
	}
	fetch, stopFetch := context.WithCancel(ctx)
	hard, stopHard := context.WithCancel(ctx)
	done := make(chan struct{})
	o := e.runOpts()
	go func() { _ = runStages(fetch, hard, o, e.graph, e.ops); close(done) }()
	return func(abort bool) {
		stopFetch()
		if abort {
			stopHard()
		}
		select {
		case <-done:
		case <-time.After(localGrace):
			stopHard()
			<-done
		}
		stopHard()
	}
}

// localGrace bounds how long Serve waits for its own workers' last acks
// after the run has drained.
const localGrace = 5 * time.Second

func (e *Engine) runOpts() *runOpts {
	return &runOpts{
		js: e.js, n: e.n, maxDeliver: e.cfg.MaxDeliver, prefetch: e.cfg.Prefetch, ackWait: e.cfg.AckWait,
		now: e.cfg.Now, observer: e.cfg.Observer, stats: &e.local, logf: e.cfg.Logf,
		key: e.cfg.Key, node: coordinatorNode,
	}
}

// runSink reads the results stream: it collects credits (once per key),
// drops records whose ID was already delivered (counted) and sends the
// others to Results, acking each message after that.
func (e *Engine) runSink(ctx context.Context) error {
	cons, err := e.js.Consumer(ctx, e.n.resultsStream(), e.n.sinkConsumer())
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	it, err := cons.Messages(natsjs.PullMaxMessages(64), natsjs.PullExpiry(pullExpiry))
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	defer context.AfterFunc(ctx, it.Stop)()
	s := &sink{e: e, keys: map[string]struct{}{}, ids: map[string]struct{}{}}
	for {
		msg, err := it.Next()
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, natsjs.ErrMsgIteratorClosed) {
			return errors.New("sink: the results consumer closed before the run drained")
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !s.take(ctx, msg) {
			return nil
		}
		_ = msg.Ack()
		e.checkDrained()
	}
}

type sink struct {
	e    *Engine
	keys map[string]struct{} // credit keys collected
	ids  map[string]struct{} // record IDs delivered
}

// take handles one results message; false means the run is stopping.
func (s *sink) take(ctx context.Context, msg natsjs.Msg) bool {
	e, h := s.e, msg.Headers()
	if verifySealed(e.cfg.Key, msg.Subject(), h, msg.Data()) != nil {
		e.sink.rejected.Add(1) // forged or altered: no credit, no record
		return true
	}
	if h.Get(hdrKind) == kindRej { // a worker dropped a forged stage message
		if _, seen := s.keys[h.Get(hdrKey)]; !seen {
			s.keys[h.Get(hdrKey)] = struct{}{}
			e.sink.rejected.Add(1)
		}
		return true
	}
	key := h.Get(hdrKey)
	_, seenKey := s.keys[key]
	if !seenKey {
		s.keys[key] = struct{}{}
		defer e.credits.Add(parseCredit(h))
	}
	kind := h.Get(hdrKind)
	if kind == kindRet {
		return true
	}
	rec, err := dataflow.DecodeRecord(msg.Data())
	if err != nil {
		e.cfg.Logf("sink: dropping an undecodable result: %v", err)
		return true
	}
	if _, dup := s.ids[rec.ID]; dup {
		e.sink.duplicates.Add(1)
		return true
	}
	select {
	case e.results <- rec:
	case <-ctx.Done():
		return false
	}
	s.ids[rec.ID] = struct{}{}
	e.sink.delivered.Add(1)
	if rec.Err != nil {
		e.sink.errors.Add(1)
	}
	if kind == kindDead {
		e.sink.dead.Add(1)
	}
	return true
}
