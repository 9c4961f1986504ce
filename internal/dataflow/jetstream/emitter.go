package jetstream

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// emitter publishes the outputs of one call. It holds the latest output
// back until the next emit or the end of the call, so that the last
// output can carry whatever credit is left: each published output takes
// half the remaining credit, the last one the rest, and a call that emits
// nothing returns its credit to the sink. Credits are integers, so the
// sink's sum is exact: the run has drained when it holds one unit per
// submitted record.
type emitter struct {
	r      *stageRunner
	in     *dataflow.Record
	credit uint64
	n      int
	held   *nats.Msg
	futs   []pending
	alive  func() // keeps the input from redelivery while outputs wait
}

type pending struct {
	fut natsjs.PubAckFuture
	msg *nats.Msg
}

// emit is the operator's emit function (serialised by dataflow.Call).
func (e *emitter) emit(out dataflow.Record) error {
	r, in := e.r, e.in
	now := r.o.now()
	if out.ID == "" {
		out.ID = in.ID + "." + strconv.Itoa(e.n)
	}
	if out.Meta == (dataflow.Metadata{}) {
		out.Meta = in.Meta
	}
	out.Err, out.Delivery = nil, 1
	out.Hops = slices.Clone(in.Hops)
	out.Hops[len(out.Hops)-1].Ended = now
	var m *nats.Msg
	if r.next == "" {
		m = r.o.n.resultMsg(r.o.n.resultsSubject(), kindOut, "o/"+out.ID, out, 0)
	} else {
		out.Hops = append(out.Hops, dataflow.Hop{Stage: r.next, Enqueued: now})
		m = nats.NewMsg(r.o.n.stageSubject(r.idx + 1))
		m.Header.Set(hdrMsgID, msgID(r.o.key, out.ID))
		m.Data = dataflow.AppendRecord(make([]byte, 0, 96+len(out.Payload)), out)
	}
	e.n++
	if e.held != nil {
		half := e.credit / 2
		e.credit -= half
		e.send(e.held, half)
	}
	e.held = m
	return nil
}

// finish publishes the held output with the remaining credit, the error
// record of a failed call, or a credit return for a call that emitted
// nothing; wait then blocks until the server has stored every publish.
func (e *emitter) finish(se *dataflow.StageError, ended time.Time) {
	r := e.r
	if e.held != nil {
		c := e.credit
		if se != nil {
			c = e.credit / 2
		}
		e.credit -= c
		e.send(e.held, c)
	}
	switch {
	case se != nil:
		rec := *e.in
		rec.Hops = slices.Clone(rec.Hops)
		rec.Hops[len(rec.Hops)-1].Ended = ended
		rec.Err = se
		m := r.o.n.resultMsg(r.o.n.resultsSubject(), kindErr, "e/"+r.cfg.Name+"/"+rec.ID, rec, e.credit)
		e.send(m, e.credit)
	case e.n == 0:
		m := r.o.n.resultMsg(r.o.n.resultsSubject(), kindRet, "c/"+r.cfg.Name+"/"+e.in.ID, dataflow.Record{ID: e.in.ID}, e.credit)
		e.send(m, e.credit)
	}
}

func (e *emitter) send(m *nats.Msg, credit uint64) {
	m.Header.Set(hdrCredit, strconv.FormatUint(credit, 10))
	seal(m, e.r.o.key, e.r.o.node)
	fut, err := e.r.o.js.PublishMsgAsync(m)
	if err != nil {
		fut = nil // published again by wait
	}
	e.futs = append(e.futs, pending{fut: fut, msg: m})
}

// wait blocks until every publish of the call is stored, publishing again
// (same message ID, so the stream drops a double) any that failed — a full
// stream is the backpressure.
func (e *emitter) wait(ctx context.Context) error {
	for _, p := range e.futs {
		var ack *natsjs.PubAck
		var err error
		if p.fut != nil {
			select { // an ack already in wins over a cancelled ctx
			case ack = <-p.fut.Ok():
				e.count(ack)
				continue
			default:
			}
			t := time.NewTimer(pubAckTimeout)
			select {
			case ack = <-p.fut.Ok():
			case err = <-p.fut.Err():
			case <-t.C: // the ack was lost (a reconnect): publish again
				err = context.DeadlineExceeded
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
			t.Stop()
		}
		if p.fut == nil || err != nil {
			if ack, err = publishAlive(ctx, e.r.o.js, p.msg, e.alive); err != nil {
				return err
			}
		}
		e.count(ack)
	}
	e.futs = e.futs[:0]
	return nil
}

// count notes a publish the stream dropped as a duplicate.
func (e *emitter) count(ack *natsjs.PubAck) {
	if ack != nil && ack.Duplicate {
		e.r.o.stats.streamDuplicates.Add(1)
	}
}
