package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/record"
)

// publisher streams a node's records of one phase to the record subject,
// asynchronously, each sealed (Nats-Msg-Id = its MAC); flush waits for the
// server's acks and publishes again what failed.
type publisher struct {
	js      natsjs.JetStream
	subject string
	node    string
	key     []byte // the run key: every record is sealed with it
	mu      sync.Mutex
	pending []pubAttempt
	count   int
}

type pubAttempt struct {
	msg *nats.Msg
	fut natsjs.PubAckFuture // nil: the async publish failed at once
}

// add publishes rec (named after the node); safe for concurrent use.
func (p *publisher) add(rec record.Request) {
	rec.Node = p.node
	b, err := json.Marshal(rec)
	if err != nil { // a record is plain data; this cannot happen
		b, _ = json.Marshal(record.Request{ID: rec.ID, Seq: rec.Seq, Kind: rec.Kind, Phase: rec.Phase, Node: p.node, Error: err.Error()})
	}
	m := nats.NewMsg(p.subject)
	m.Data = b
	seal(p.key, p.node, m)
	fut, err := p.js.PublishMsgAsync(m)
	if err != nil {
		fut = nil
	}
	p.mu.Lock()
	p.pending = append(p.pending, pubAttempt{msg: m, fut: fut})
	p.count++
	p.mu.Unlock()
}

// flush waits for every publish to be stored, publishing again (same
// Nats-Msg-Id: the stream drops a copy it already holds) those whose
// ack failed or did not come, until ctx is done.
func (p *publisher) flush(ctx context.Context) (count int, err error) {
	p.mu.Lock()
	pend, count := p.pending, p.count
	p.pending = nil
	p.mu.Unlock()
	var errs []error
	for _, a := range pend {
		if a.fut != nil && waitAck(ctx, a.fut) {
			continue
		}
		if err := publishSync(ctx, p.js, a.msg); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return count, fmt.Errorf("%d of %d records not stored: %w", len(errs), len(pend), errs[0])
	}
	return count, nil
}

// ackWait bounds the wait for one async publish's ack.
const ackWait = 5 * time.Second

func waitAck(ctx context.Context, f natsjs.PubAckFuture) bool {
	t := time.NewTimer(ackWait)
	defer t.Stop()
	select {
	case <-f.Ok():
		return true
	case <-f.Err():
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// publishSync publishes m until the server stores it: up to 5 tries,
// backing off, or until ctx is done.
func publishSync(ctx context.Context, js natsjs.JetStream, m *nats.Msg) error {
	var err error
	for try := range 5 {
		pctx, cancel := context.WithTimeout(ctx, ackWait)
		_, err = js.PublishMsg(pctx, m)
		cancel()
		if err == nil || ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		select {
		case <-time.After(time.Duration(50<<try) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}
