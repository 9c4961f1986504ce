package gateway

import (
	"context"
	"errors"
	"time"

	"sync"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/sched"
)

// pool is the admission queue and the engines of one kind. Requests wait
// in their model's policy queue until an engine serving that model has a
// free slot: only requests for one model compete for the same engines, so
// one queue per model lets the policy order exactly those.
type pool struct {
	kind    engine.Kind
	g       *Gateway
	mu      sync.Mutex
	policy  string                  // the policy every model queue runs
	queues  map[string]sched.Policy // by model; created on demand, dropped when empty
	parked  []*ticket               // a retry whose only free engine is the one that failed it
	members []*entry
	seq     uint64
	queued  int // tickets waiting (not cancelled, not assigned)
}

// queue returns model's queue, creating it with the pool's policy.
func (p *pool) queue(model string) sched.Policy {
	q := p.queues[model]
	if q == nil {
		q, _ = sched.New(p.policy, p.g.cfg.Sched) // the name was checked by New or SetPolicy
		p.queues[model] = q
	}
	return q
}

// ticket is one request's place in a pool.
type ticket struct {
	item     sched.Item
	model    string
	inputs   []string // embedding inputs, for batching
	urgent   bool
	exclude  *entry // engine that already failed this request
	ready    chan assignment
	assigned bool // guarded by pool.mu
	gone     bool // the client left while queued; guarded by pool.mu
}

// assignment is the dispatcher's answer to a ticket.
type assignment struct {
	m     *entry
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
	p.queue(t.model).Push(&t.item)
	p.queued++
	p.dispatchLocked()
	return nil
}

// requeue puts a ticket whose engine failed before the first token back
// into the queue, keeping its admission order, avoiding that engine.
func (p *pool) requeue(t *ticket, failed *entry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t.exclude, t.assigned = failed, false
	p.queue(t.model).Push(&t.item)
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
func (p *pool) release(m *entry, err error, speed time.Duration) {
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
	case errors.Is(err, engine.ErrTooLarge): // the client's error
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

// fitsElsewhere reports whether an active engine of model other than
// tried may take a request that tried refused as too large (unknown
// budgets count as "may").
func (p *pool) fitsElsewhere(model string, tried *entry, err error) bool {
	var te *engine.TooLargeError
	if !errors.As(err, &te) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.members {
		if m == tried || m.model != model || m.state != stateActive || m.eng.LLM == nil {
			continue
		}
		if c := m.eng.LLM.Load().KVCapacity; c == 0 || c >= te.Need {
			return true
		}
	}
	return false
}

// dispatchLocked assigns queued tickets to free engines in policy order.
func (p *pool) dispatchLocked() {
	now := p.g.now()
	p.placeParked()
	if !p.anyActive() {
		p.failAll(now)
		return
	}
	for model, q := range p.queues {
		p.dispatchModel(model, q, now)
		if q.Len() == 0 {
			delete(p.queues, model)
		}
	}
}

// dispatchModel hands model's queued tickets to its free engines.
func (p *pool) dispatchModel(model string, q sched.Policy, now time.Time) {
	if !p.hasActive(model) {
		p.failQueue(q, now, unavailable("no healthy %s engine serves model %q", p.kind, model))
		return
	}
	b, batching := q.(sched.Batcher)
	batching = batching && p.kind == engine.KindEmbedding
	for q.Len() > 0 && p.freeFor(model) {
		var items []*sched.Item
		if batching {
			items = b.PopBatch(now, p.g.cfg.MaxBatch)
		} else if it := q.Pop(now); it != nil {
			items = []*sched.Item{it}
		}
		live := p.live(items)
		if len(live) == 0 {
			continue
		}
		switch m := p.pick(live[0]); {
		case m != nil && len(live) > 1:
			p.assignBatch(live, m)
		case m != nil:
			p.assign(live[0], m)
		default: // a retry avoiding the one free engine
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
	for model, q := range p.queues {
		p.failQueue(q, now, unavailable("no healthy %s engine", p.kind))
		delete(p.queues, model)
	}
}

func (p *pool) failQueue(q sched.Policy, now time.Time, e *apiError) {
	for it := q.Pop(now); it != nil; it = q.Pop(now) {
		if t := it.Value.(*ticket); !t.gone {
			p.fail([]*ticket{t}, e)
		}
	}
}

func (p *pool) assign(t *ticket, m *entry) {
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

func (p *pool) freeFor(model string) bool {
	for _, m := range p.members {
		if m.model == model && m.free() {
			return true
		}
	}
	return false
}

// pick routes t: among free engines serving its model (avoiding one that
// already failed it, unless it is the only healthy one), the fastest for
// urgent work, the least loaded otherwise.
func (p *pool) pick(t *ticket) *entry {
	others := false
	for _, m := range p.members {
		if m != t.exclude && m.state == stateActive && m.model == t.model {
			others = true
			break
		}
	}
	var best *entry
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

func better(urgent bool, m *entry, load float64, best *entry, bestLoad float64) bool {
	ms, bs := m.speedOrMax(), best.speedOrMax()
	if urgent && ms != bs {
		return ms < bs
	}
	if load != bestLoad {
		return load < bestLoad
	}
	return ms < bs
}

func (m *entry) speedOrMax() time.Duration {
	if m.speed > 0 {
		return m.speed
	}
	return time.Duration(1<<62 - 1)
}
