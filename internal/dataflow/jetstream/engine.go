package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// Engine runs a dataflow graph on NATS JetStream (see the package
// documentation). It is the coordinator of one run: Deploy, Serve, then
// discard it.
type Engine struct {
	cfg   Config
	nc    *nats.Conn
	ownNC bool
	js    natsjs.JetStream
	n     names

	deployMu sync.Mutex
	deployed atomic.Bool
	opened   atomic.Bool // Open: a run without a graph
	served   atomic.Bool
	graph    dataflow.Graph // resolved
	ops      []dataflow.Operator
	subs     []*nats.Subscription

	results     chan dataflow.Record
	closed      atomic.Bool
	submitting  atomic.Int64 // Submit calls under way and records not yet confirmed
	unconfirmed chan pending // submitted, waiting for the server's ack
	submitted   atomic.Int64
	credits     atomic.Uint64 // collected by the sink
	drained     chan struct{}
	drainOnce   sync.Once
	stopCtx     context.Context // cancelled when Serve ends
	stopRun     context.CancelFunc

	sink    sinkStats
	server  serverCounts
	workers roster
	local   counters
}

var _ dataflow.Engine = (*Engine)(nil)

// New connects to the server and returns an engine for one run.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("jetstream engine: %w", err)
	}
	cfg = cfg.withDefaults()
	e := &Engine{
		cfg: cfg, nc: cfg.NC, n: names{run: cfg.Run},
		results:     make(chan dataflow.Record, cfg.ResultsCapacity),
		unconfirmed: make(chan pending, submitWindow),
		drained:     make(chan struct{}),
	}
	e.stopCtx, e.stopRun = context.WithCancel(context.Background())
	if e.nc == nil {
		if cfg.Conn.Name == "" {
			cfg.Conn.Name = "sagebench coordinator " + cfg.Run
		}
		nc, err := Connect(cfg.Conn)
		if err != nil {
			return nil, err
		}
		e.nc, e.ownNC = nc, true
	}
	js, err := natsjs.New(e.nc)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("jetstream engine: %w", err)
	}
	e.js = js
	return e, nil
}

// Run is the run ID: it names the streams and is what workers join.
func (e *Engine) Run() string { return e.cfg.Run }

// Close releases the connection if the engine dialled it. Serve does not
// close it, so that Stats and the stream cleanup still work after it.
//
// A deployed run that was never served (e.g. its workers did not join)
// has its streams deleted here, unless KeepStreams.
func (e *Engine) Close() {
	if e.deployed.Load() && !e.served.Load() && !e.cfg.KeepStreams {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = e.deleteStreams(ctx)
		cancel()
	}
	e.end()
	e.stopRun()
	for _, s := range e.subs {
		_ = s.Unsubscribe()
	}
	if e.ownNC {
		e.nc.Close()
	}
}

// Deploy validates g, refuses (or with CleanStale deletes) streams left
// by crashed runs, creates the run's streams and consumers and starts
// answering workers that join.
func (e *Engine) Deploy(ctx context.Context, g dataflow.Graph) error {
	var ops []dataflow.Operator
	var err error
	if e.cfg.RemoteOnly {
		err = g.Validate()
	} else {
		ops, err = e.cfg.Registry.Build(g)
	}
	if err != nil {
		return err
	}
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	if e.deployed.Load() || e.opened.Load() {
		return dataflow.ErrDeployed
	}
	if err := e.checkStale(ctx); err != nil {
		return err
	}
	e.graph, e.ops = g.Resolved(), ops
	// Answer pings before the streams exist, so that no other coordinator
	// takes them for a crashed run's; answer joins once they exist.
	if err := e.listen(e.n.pingSubject(), e.n.clockSubject()); err != nil {
		return err
	}
	if err := e.createStreams(ctx); err != nil {
		_ = e.deleteStreams(context.WithoutCancel(ctx))
		return err
	}
	if err := e.listen(e.n.joinSubject(), anyJoinSubject); err != nil {
		_ = e.deleteStreams(context.WithoutCancel(ctx))
		return err
	}
	e.deployed.Store(true)
	go e.confirm()
	return nil
}

func (e *Engine) storage() natsjs.StorageType {
	if e.cfg.FileStorage {
		return natsjs.FileStorage
	}
	return natsjs.MemoryStorage
}

func (e *Engine) createStreams(ctx context.Context) error {
	for i, s := range e.graph.Stages {
		_, err := e.js.CreateStream(ctx, natsjs.StreamConfig{
			Name: e.n.stageStream(i), Subjects: []string{e.n.stageSubject(i)},
			Retention: natsjs.WorkQueuePolicy, MaxMsgs: int64(s.QueueCapacity), Discard: natsjs.DiscardNew,
			Storage: e.storage(), Replicas: e.cfg.Replicas, Duplicates: e.dedupWindow(),
		})
		if err != nil {
			return fmt.Errorf("stage %q: creating stream %s: %w", s.Name, e.n.stageStream(i), err)
		}
		_, err = e.js.CreateConsumer(ctx, e.n.stageStream(i), natsjs.ConsumerConfig{
			Durable: e.n.stageConsumer(i), AckPolicy: natsjs.AckExplicitPolicy,
			AckWait: e.cfg.AckWait, MaxDeliver: e.cfg.MaxDeliver + 1,
			BackOff:       backoff(e.cfg.AckWait, e.cfg.MaxDeliver),
			MaxAckPending: s.QueueCapacity, Replicas: e.cfg.Replicas,
		})
		if err != nil {
			return fmt.Errorf("stage %q: creating consumer: %w", s.Name, err)
		}
	}
	_, err := e.js.CreateStream(ctx, natsjs.StreamConfig{
		Name: e.n.resultsStream(), Subjects: []string{e.n.resultsSubject()},
		Retention: natsjs.WorkQueuePolicy, MaxMsgs: int64(e.cfg.ResultsCapacity), Discard: natsjs.DiscardNew,
		Storage: e.storage(), Replicas: e.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("creating results stream %s: %w", e.n.resultsStream(), err)
	}
	_, err = e.js.CreateStream(ctx, natsjs.StreamConfig{
		Name: e.n.deadStream(), Subjects: []string{e.n.deadSubject()},
		Storage: e.storage(), Replicas: e.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("creating dead-letter stream %s: %w", e.n.deadStream(), err)
	}
	_, err = e.js.CreateConsumer(ctx, e.n.resultsStream(), natsjs.ConsumerConfig{
		Durable: e.n.sinkConsumer(), AckPolicy: natsjs.AckExplicitPolicy, AckWait: e.cfg.AckWait,
		MaxAckPending: e.cfg.ResultsCapacity, Replicas: e.cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("creating the sink consumer: %w", err)
	}
	return nil
}

// sealedDedupWindow is how long a sealed run's stage streams remember a
// message's Nats-Msg-Id: a genuine message captured and published again
// within it is dropped by the stream (the server's default is 2 min). One
// replayed later is served again — load on the target — and its outputs
// are dropped at the sink as duplicates (docs/distributed.md).
const sealedDedupWindow = time.Hour

// dedupWindow is the stage streams' duplicate window: the server's
// default (0) on an unsealed run.
func (e *Engine) dedupWindow() time.Duration {
	if len(e.cfg.Key) == 0 {
		return 0
	}
	return sealedDedupWindow
}

// deleteStreams removes every stream of this run.
func (e *Engine) deleteStreams(ctx context.Context) error {
	var errs []error
	for i := range e.graph.Stages {
		if err := e.js.DeleteStream(ctx, e.n.stageStream(i)); err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
			errs = append(errs, err)
		}
	}
	for _, name := range []string{e.n.resultsStream(), e.n.deadStream()} {
		if err := e.js.DeleteStream(ctx, name); err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Submit publishes r to the first stage with Nats-Msg-Id = r.ID and
// returns once the publish is under way: up to submitWindow records await
// the server's ack, which a confirmer collects, publishing again any that
// failed (a full stream) or whose ack was lost. A full window blocks
// Submit until ctx is done: that is the backpressure.
func (e *Engine) Submit(ctx context.Context, r dataflow.Record) error {
	if r.ID == "" {
		return dataflow.ErrEmptyID
	}
	if !e.deployed.Load() {
		return dataflow.ErrNotDeployed
	}
	e.submitting.Add(1) // until the confirmer has it stored
	if e.closed.Load() {
		e.submitDone()
		return dataflow.ErrClosed
	}
	r.Delivery, r.Err = 1, nil
	r.Hops = []dataflow.Hop{{Stage: e.graph.Stages[0].Name, Enqueued: e.cfg.Now()}}
	m := nats.NewMsg(e.n.stageSubject(0))
	m.Header.Set(hdrMsgID, msgID(e.cfg.Key, r.ID))
	m.Header.Set(hdrCredit, strconv.FormatUint(unit, 10))
	m.Data = dataflow.AppendRecord(make([]byte, 0, 96+len(r.Payload)), r)
	seal(m, e.cfg.Key, coordinatorNode)
	fut, err := e.js.PublishMsgAsync(m)
	if err != nil {
		fut = nil // the confirmer publishes it again
	}
	select {
	case e.unconfirmed <- pending{fut: fut, msg: m}:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-e.stopCtx.Done():
		err = dataflow.ErrClosed
	}
	e.submitDone()
	return err
}

// submitWindow is how many submitted records may wait for the server's
// ack; a full window blocks Submit (with a full first stream, that is the
// backpressure).
const submitWindow = 256

// confirm waits, in order, for the acks of submitted records, publishing
// again (same Nats-Msg-Id) any that failed or whose ack was lost, and
// counts each once stored. It runs from Deploy until the run stops.
func (e *Engine) confirm() {
	for {
		select {
		case p := <-e.unconfirmed:
			if e.confirmOne(p) {
				e.submitted.Add(1)
			}
			e.submitDone()
		case <-e.stopCtx.Done():
			return
		}
	}
}

func (e *Engine) confirmOne(p pending) bool {
	if p.fut != nil {
		t := time.NewTimer(pubAckTimeout)
		defer t.Stop()
		select {
		case <-p.fut.Ok():
			return true
		case <-p.fut.Err():
		case <-t.C:
		case <-e.stopCtx.Done():
			return false
		}
	}
	_, err := publishAck(e.stopCtx, e.js, p.msg)
	return err == nil
}

func (e *Engine) submitDone() {
	e.submitting.Add(-1)
	e.checkDrained()
}

// Results returns the channel of results (see dataflow.Engine).
func (e *Engine) Results() <-chan dataflow.Record { return e.results }

// CloseInput declares the end of the input (see dataflow.Engine).
func (e *Engine) CloseInput() {
	e.closed.Store(true)
	e.checkDrained()
}

// checkDrained ends the run once the input is closed and the sink holds a
// unit of credit for every submitted record.
func (e *Engine) checkDrained() {
	if !e.closed.Load() || e.submitting.Load() != 0 {
		return
	}
	if e.credits.Load() >= uint64(e.submitted.Load())*unit {
		e.drainOnce.Do(func() { close(e.drained) })
	}
}
