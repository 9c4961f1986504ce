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

// counters are what the workers of one process have done.
type counters struct {
	processed, redelivered, timedOut, deadLettered, streamDuplicates, rejected atomic.Int64
}

// runOpts are the per-run settings every stage worker shares.
type runOpts struct {
	js         natsjs.JetStream
	n          names
	maxDeliver int
	prefetch   int
	ackWait    time.Duration
	now        func() time.Time
	observer   dataflow.Observer
	stats      *counters
	logf       func(string, ...any)
	key        []byte // the run key: messages are sealed with it and checked (nil: neither)
	node       string // this process's name in its seals
}

// stageRunner serves one stage in this process.
type stageRunner struct {
	o    *runOpts
	idx  int
	cfg  dataflow.StageConfig
	op   dataflow.Operator
	next string // the next stage's name; "" for the last stage
}

// runStages serves every stage of g with ops until fetch is done (then
// in-flight records finish and are acked) or hard is done (then they are
// abandoned, to be redelivered).
func runStages(fetch, hard context.Context, o *runOpts, g dataflow.Graph, ops []dataflow.Operator) error {
	var wg sync.WaitGroup
	errs := make([]error, len(g.Stages))
	for i, s := range g.Stages {
		r := &stageRunner{o: o, idx: i, cfg: s, op: ops[i]}
		if i+1 < len(g.Stages) {
			r.next = g.Stages[i+1].Name
		}
		cons, err := o.js.Consumer(hard, o.n.stageStream(i), o.n.stageConsumer(i))
		if err != nil {
			errs[i] = fmt.Errorf("stage %q: consumer: %w", s.Name, err)
			continue
		}
		for range s.Parallelism {
			wg.Go(func() { r.fetchLoop(fetch, hard, cons) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fetchLoop is one worker of the stage: take a message, serve it, repeat.
func (r *stageRunner) fetchLoop(fetch, hard context.Context, cons natsjs.Consumer) {
	it, err := cons.Messages(natsjs.PullMaxMessages(r.o.prefetch), natsjs.PullExpiry(pullExpiry))
	if err != nil {
		r.o.logf("stage %s: pulling: %v", r.cfg.Name, err)
		return
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-fetch.Done():
			it.Drain()
		case <-done:
			it.Stop()
			return
		}
		select {
		case <-hard.Done():
			it.Stop()
		case <-done:
		}
	}()
	hb := startHeartbeat(r.o.ackWait / 3)
	defer hb.stop()
	acks := make(chan ackJob, ackWindow)
	acked := make(chan struct{})
	go func() { r.acker(hard, acks); close(acked) }()
	defer func() { close(acks); <-acked }()
	for {
		msg, err := it.Next()
		if errors.Is(err, natsjs.ErrMsgIteratorClosed) || hard.Err() != nil {
			return
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond) // a missed heartbeat or a reconnect
			continue
		}
		r.handle(hard, msg, hb, acks)
	}
}

// pullExpiry is how long a pull request lives. The server heartbeats a
// pull at half of it, and the client issues a new pull after two missed
// heartbeats, so a pull lost to a server failure or a moved consumer
// leader is replaced within pullExpiry (the default, 30 s, stalled a run
// for that long when a cluster node died).
const pullExpiry = 4 * time.Second

// ackWindow is how many served records a worker may have waiting for
// their publishes to be stored before it stops taking new ones.
const ackWindow = 32

// ackJob is a served delivery waiting for its publishes to be stored.
type ackJob struct {
	msg natsjs.Msg
	em  *emitter
	ev  dataflow.Event
}

// acker acks each served delivery once the server has stored every one of
// its publishes (publish-then-ack), in order, so that serving the next
// record overlaps with the round trips of the previous ones.
func (r *stageRunner) acker(ctx context.Context, jobs <-chan ackJob) {
	for j := range jobs {
		if j.em.wait(ctx) != nil {
			continue // not acked: the record is redelivered
		}
		_ = j.msg.Ack()
		r.o.stats.processed.Add(1)
		if r.o.observer != nil {
			r.o.observer(j.ev)
		}
	}
}

// handle serves one delivery and acks it once every output is stored.
func (r *stageRunner) handle(ctx context.Context, msg natsjs.Msg, hb *heartbeat, acks chan<- ackJob) {
	started := r.o.now()
	if err := verifySealed(r.o.key, msg.Subject(), msg.Headers(), msg.Data()); err != nil {
		r.reject(ctx, msg)
		return
	}
	credit := parseCredit(msg.Headers())
	md, merr := msg.Metadata()
	rec, derr := dataflow.DecodeRecord(msg.Data())
	if derr == nil && len(rec.Hops) == 0 {
		derr = errors.New("record without hops")
	}
	if merr != nil || derr != nil || md.NumDelivered > uint64(r.o.maxDeliver) {
		r.deadLetter(ctx, msg, rec, credit, md, errors.Join(merr, derr))
		return
	}
	if rec.Err != nil { // dead-lettered upstream: pass it on untouched
		if r.forward(ctx, rec, credit) == nil {
			_ = msg.Ack()
		}
		return
	}
	rec.Delivery = int(md.NumDelivered)
	if rec.Delivery > 1 {
		r.o.stats.redelivered.Add(1)
	}
	rec.Hops[len(rec.Hops)-1].Started = started
	hb.watch(msg)
	defer hb.watch(nil) // the acker's wait is short unless a stream is full
	em := &emitter{r: r, in: &rec, credit: credit, alive: keepAlive(msg, r.o.ackWait/3)}
	se, abandoned := dataflow.Call(ctx, r.cfg, r.op, rec, em.emit)
	if abandoned {
		r.o.stats.timedOut.Add(1)
	}
	ended := r.o.now()
	if ctx.Err() != nil {
		return // the run stops: no ack, the record is redelivered
	}
	em.finish(se, ended)
	h := rec.Hops[len(rec.Hops)-1]
	h.Ended = ended
	acks <- ackJob{msg: msg, em: em, ev: dataflow.Event{Stage: r.cfg.Name, ID: rec.ID, Trace: rec.Meta.Trace, Delivery: rec.Delivery, Hop: h, Outputs: em.n, Err: se}}
}

// reject drops a message that is not sealed with the run key (forged, or
// altered in flight): it is terminated unread, and a sealed notice on the
// results stream tells the coordinator, whose run is then invalid.
func (r *stageRunner) reject(ctx context.Context, msg natsjs.Msg) {
	_ = msg.Term()
	n := r.o.stats.rejected.Add(1)
	r.o.logf("stage %s: dropped a message not sealed with the run key (sender %q)", r.cfg.Name, clip(msg.Headers().Get(hdrNode)))
	m := r.o.n.resultMsg(r.o.n.resultsSubject(), kindRej, fmt.Sprintf("r/%s/%s/%d", r.o.node, r.cfg.Name, n), dataflow.Record{}, 0)
	seal(m, r.o.key, r.o.node)
	if err := publishRetry(ctx, r.o.js, m); err != nil {
		r.o.logf("stage %s: reporting a rejected message: %v", r.cfg.Name, err)
	}
}

// clip bounds a peer-given string for a log line.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// deadLetter gives up on a message: it publishes a copy of the record to
// the dead-letter stream (for inspection) and forwards it down the graph
// as a KindDeadLetter error record, then terminates the message.
func (r *stageRunner) deadLetter(ctx context.Context, msg natsjs.Msg, rec dataflow.Record, credit uint64, md *natsjs.MsgMetadata, cause error) {
	if rec.ID == "" {
		rec.ID = msg.Headers().Get(hdrMsgID)
	}
	why := "undecodable record: " + fmt.Sprint(cause)
	if cause == nil {
		why = fmt.Sprintf("gave up after %d deliveries (max_deliver %d)", md.NumDelivered-1, r.o.maxDeliver)
	}
	rec.Err = &dataflow.StageError{Stage: r.cfg.Name, Operator: r.cfg.Operator, Kind: dataflow.KindDeadLetter, Message: why}
	dead := nats.NewMsg(r.o.n.deadSubject())
	dead.Data = dataflow.AppendRecord(nil, rec)
	dctx, cancel := context.WithTimeout(ctx, pubAckTimeout)
	defer cancel()
	if _, err := r.o.js.PublishMsg(dctx, dead); err != nil {
		r.o.logf("stage %s: dead-letter copy of %q: %v", r.cfg.Name, rec.ID, err)
	}
	if err := r.forward(ctx, rec, credit); err != nil {
		return
	}
	r.o.stats.deadLettered.Add(1)
	r.o.logf("stage %s: record %q dead-lettered: %s", r.cfg.Name, rec.ID, why)
	_ = msg.Term()
}

// forward passes a dead-lettered record on unchanged: to the next stage
// with its ID as Nats-Msg-Id, so that the stream drops it if the record's
// output was already forwarded before a crash (its credit is not counted
// twice), or to the results stream under the key an output of the last
// stage would have had.
func (r *stageRunner) forward(ctx context.Context, rec dataflow.Record, credit uint64) error {
	var m *nats.Msg
	if r.next == "" {
		m = r.o.n.resultMsg(r.o.n.resultsSubject(), kindDead, "o/"+rec.ID, rec, credit)
	} else {
		m = nats.NewMsg(r.o.n.stageSubject(r.idx + 1))
		m.Header.Set(hdrMsgID, msgID(r.o.key, rec.ID))
		m.Header.Set(hdrCredit, strconv.FormatUint(credit, 10))
		m.Data = dataflow.AppendRecord(nil, rec)
	}
	seal(m, r.o.key, r.o.node)
	return publishRetry(ctx, r.o.js, m)
}

func parseCredit(h nats.Header) uint64 {
	v, err := strconv.ParseUint(h.Get(hdrCredit), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// resultMsg builds a message for the results stream. It carries no
// Nats-Msg-Id, so duplicates reach the sink and are counted there.
func (n names) resultMsg(subject, kind, key string, rec dataflow.Record, credit uint64) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Header.Set(hdrKind, kind)
	m.Header.Set(hdrKey, key)
	m.Header.Set(hdrCredit, strconv.FormatUint(credit, 10))
	m.Data = dataflow.AppendRecord(nil, rec)
	return m
}

// publishRetry publishes m until the stream stores it (a full stream
// rejects it: backpressure) or ctx is done.
func publishRetry(ctx context.Context, js natsjs.JetStream, m *nats.Msg) error {
	_, err := publishAck(ctx, js, m)
	return err
}

// pubAckTimeout bounds one publish attempt: an ack lost to a reconnect
// must not stall the caller; the retry carries the same message ID.
const pubAckTimeout = 2 * time.Second

func publishAck(ctx context.Context, js natsjs.JetStream, m *nats.Msg) (*natsjs.PubAck, error) {
	return publishAlive(ctx, js, m, nil)
}

// publishAlive is publishAck calling alive (if not nil) between attempts,
// so that the caller can keep its own input from being redelivered while
// a full stream holds its output back.
func publishAlive(ctx context.Context, js natsjs.JetStream, m *nats.Msg, alive func()) (*natsjs.PubAck, error) {
	wait := 200 * time.Microsecond
	for {
		if alive != nil {
			alive()
		}
		fresh := &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
		actx, cancel := context.WithTimeout(ctx, pubAckTimeout)
		ack, err := js.PublishMsg(actx, fresh)
		cancel()
		if err == nil {
			return ack, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// heartbeat sends InProgress on the message being served every period,
// so a long operator is not redelivered while it works.
type heartbeat struct {
	mu   sync.Mutex
	msg  natsjs.Msg
	quit chan struct{}
}

func startHeartbeat(period time.Duration) *heartbeat {
	h := &heartbeat{quit: make(chan struct{})}
	go func() {
		t := time.NewTicker(max(period, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				h.mu.Lock()
				if h.msg != nil {
					_ = h.msg.InProgress()
				}
				h.mu.Unlock()
			case <-h.quit:
				return
			}
		}
	}()
	return h
}

func (h *heartbeat) watch(m natsjs.Msg) {
	h.mu.Lock()
	h.msg = m
	h.mu.Unlock()
}

func (h *heartbeat) stop() { close(h.quit) }

// keepAlive returns a function that sends InProgress on m at most once
// per period.
func keepAlive(m natsjs.Msg, period time.Duration) func() {
	last := time.Now()
	return func() {
		if time.Since(last) >= period {
			last = time.Now()
			_ = m.InProgress()
		}
	}
}
