package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/sched"
	"sync"
)

// pool is the admission queue and the engines of one kind. Requests wait
// in the policy until an engine serving their model has a free slot.
type pool struct {
	kind    engine.Kind
	g       *Gateway
	mu      sync.Mutex
	policy  sched.Policy
	parked  []*ticket // popped in policy order but no free engine for their model yet
	members []*member
	seq     uint64
	queued  int // tickets waiting (not cancelled, not assigned)
}

// ticket is one request's place in a pool.
type ticket struct {
	item     sched.Item
	model    string
	inputs   []string // embedding inputs, for batching
	urgent   bool
	exclude  *member // engine that already failed this request
	ready    chan assignment
	assigned bool // guarded by pool.mu
	gone     bool // the client left while queued; guarded by pool.mu
}

// assignment is the dispatcher's answer to a ticket.
type assignment struct {
	m     *member
	batch *batch // set when the request rides in a gateway-side batch
	off   int    // first vector of this request in the batch
	err   *apiError
}

func newTicket(m meta, kind engine.Kind, model string, now time.Time) *ticket {
	t := &ticket{model: model, ready: make(chan assignment, 1)}
	t.item = sched.Item{Kind: kind, Model: model, Tenant: m.Tenant, Priority: m.Priority, Arrival: now, Deadline: m.Deadline, Value: t}
	t.urgent = m.Priority >= sched.PriorityHigh || (m.Deadline > 0 && m.Deadline <= urgentDeadline)
	return t
}

// urgentDeadline: requests with a tighter SLO are routed to the fastest engine.
const urgentDeadline = 2 * time.Second

// enqueue admits t to the queue and dispatches what it can.
func (p *pool) enqueue(t *ticket) *apiError {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasActive(t.model) {
		return unavailable("no healthy %s engine serves model %q", p.kind, t.model)
	}
	if p.queued >= p.g.cfg.QueueLimit {
		return unavailable("%s queue full (%d requests; limits.queue_limit)", p.kind, p.queued)
	}
	p.seq++
	t.item.Seq = p.seq
	p.policy.Push(&t.item)
	p.queued++
	p.dispatchLocked()
	return nil
}

// requeue puts a ticket whose engine failed before the first token back
// into the queue, keeping its admission order, avoiding that engine.
func (p *pool) requeue(t *ticket, failed *member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.exclude, t.assigned = failed, false
	p.policy.Push(&t.item)
	p.queued++
	p.dispatchLocked()
}

// wait blocks until t is assigned, the client leaves, or the queue timeout.
func (p *pool) wait(ctx context.Context, t *ticket) assignment {
	timer := time.NewTimer(p.g.cfg.QueueTimeout)
	defer timer.Stop()
	select {
	case a := <-t.ready:
		if a.err == nil {
			p.g.met.queueWait.WithLabelValues(string(p.kind), t.item.Priority.String()).Observe(p.g.now().Sub(t.item.Arrival).Seconds())
		}
		return a
	case <-ctx.Done():
	case <-timer.C:
	}
	p.mu.Lock()
	if t.assigned {
		p.mu.Unlock()
		a := <-t.ready // the dispatcher got there first: hand the slot back
		if a.m != nil && a.batch == nil {
			p.release(a.m, nil, 0)
		}
	} else {
		t.gone = true
		p.queued--
		p.mu.Unlock()
	}
	if ctx.Err() != nil {
		return assignment{err: &apiError{Status: 499, Type: "cancelled", Code: "client_closed", Message: "client closed the request"}}
	}
	return assignment{err: unavailable("queued longer than %v (limits.queue_timeout)", p.g.cfg.QueueTimeout)}
}

// release returns m's slot. err is the engine's failure (nil on success);
// speed is an observed time per token or per request for routing.
func (p *pool) release(m *member, err error, speed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m.running--
	switch {
	case err == nil:
		m.errs = 0
		m.served++
		m.observe(speed)
	case errors.Is(err, engine.ErrOverloaded): // busy, not broken
		m.failed++
	case !isClientGone(err):
		m.errs++
		m.failed++
		dead := errors.Is(err, engine.ErrClosed) || errors.Is(err, errStalled)
		if m.state == stateActive && (m.errs >= p.g.cfg.EjectAfter || dead) {
			p.g.ejectLocked(m, err)
		}
	}
	if m.state == stateDraining && m.running == 0 {
		m.state = stateDrained
		close(m.idle)
	}
	p.dispatchLocked()
}

// dispatchLocked assigns queued tickets to free engines in policy order.
func (p *pool) dispatchLocked() {
	now := p.g.now()
	p.placeParked()
	if !p.anyActive() {
		p.failAll(now)
		return
	}
	b, batching := p.policy.(sched.Batcher)
	batching = batching && p.kind == engine.KindEmbedding
	for p.policy.Len() > 0 && p.anyFree() {
		var items []*sched.Item
		if batching {
			items = b.PopBatch(now, p.g.cfg.MaxBatch)
		} else if it := p.policy.Pop(now); it != nil {
			items = []*sched.Item{it}
		}
		live := p.live(items)
		if len(live) == 0 {
			continue
		}
		m := p.pick(live[0])
		switch {
		case m != nil && len(live) > 1:
			p.assignBatch(live, m)
		case m != nil:
			p.assign(live[0], m)
		case !p.hasActive(live[0].model):
			p.fail(live, unavailable("no healthy %s engine serves model %q", p.kind, live[0].model))
		default:
			p.parked = append(p.parked, live...)
		}
	}
}

func (p *pool) live(items []*sched.Item) []*ticket {
	out := make([]*ticket, 0, len(items))
	for _, it := range items {
		if t := it.Value.(*ticket); !t.gone {
			out = append(out, t)
		}
	}
	return out
}

func (p *pool) placeParked() {
	if len(p.parked) == 0 {
		return
	}
	kept := p.parked[:0]
	for _, t := range p.parked {
		switch m := p.pick(t); {
		case t.gone:
		case m != nil:
			p.assign(t, m)
		case !p.hasActive(t.model):
			p.fail([]*ticket{t}, unavailable("no healthy %s engine serves model %q", p.kind, t.model))
		default:
			kept = append(kept, t)
		}
	}
	clear(p.parked[len(kept):])
	p.parked = kept
}

func (p *pool) failAll(now time.Time) {
	for it := p.policy.Pop(now); it != nil; it = p.policy.Pop(now) {
		if t := it.Value.(*ticket); !t.gone {
			p.fail([]*ticket{t}, unavailable("no healthy %s engine", p.kind))
		}
	}
}

func (p *pool) assign(t *ticket, m *member) {
	m.running++
	t.assigned = true
	p.queued--
	t.ready <- assignment{m: m}
}

func (p *pool) fail(ts []*ticket, e *apiError) {
	for _, t := range ts {
		t.assigned = true
		p.queued--
		t.ready <- assignment{err: e}
	}
}

func (p *pool) anyActive() bool {
	for _, m := range p.members {
		if m.state == stateActive {
			return true
		}
	}
	return false
}

func (p *pool) hasActive(model string) bool {
	for _, m := range p.members {
		if m.state == stateActive && m.model == model {
			return true
		}
	}
	return false
}

func (p *pool) anyFree() bool {
	for _, m := range p.members {
		if m.free() {
			return true
		}
	}
	return false
}

// pick routes t: among free engines serving its model (avoiding one that
// already failed it, unless it is the only healthy one), the fastest for
// urgent work, the least loaded otherwise.
func (p *pool) pick(t *ticket) *member {
	others := false
	for _, m := range p.members {
		if m != t.exclude && m.state == stateActive && m.model == t.model {
			others = true
			break
		}
	}
	var best *member
	var bestLoad float64
	for _, m := range p.members {
		if m.model != t.model || !m.free() || (others && m == t.exclude) {
			continue
		}
		load := float64(m.running) / float64(m.slots())
		if best == nil || better(t.urgent, m, load, best, bestLoad) {
			best, bestLoad = m, load
		}
	}
	return best
}

func better(urgent bool, m *member, load float64, best *member, bestLoad float64) bool {
	ms, bs := m.speedOrMax(), best.speedOrMax()
	if urgent && ms != bs {
		return ms < bs
	}
	if load != bestLoad {
		return load < bestLoad
	}
	return ms < bs
}

func (m *member) speedOrMax() time.Duration {
	if m.speed > 0 {
		return m.speed
	}
	return time.Duration(1<<62 - 1)
}
