package sched

import (
	"fmt"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

// Policy names accepted by New.
const (
	FIFO      = protocol.PolicyFIFO
	Prio      = protocol.PolicyPriority
	SLOAware  = protocol.PolicySLOAware
	FairShare = protocol.PolicyFairShare
	Hybrid    = protocol.PolicyHybrid
	Adaptive  = protocol.PolicyAdaptive
)

// Names lists the policies New accepts.
func Names() []string { return protocol.Policies() }

// Config tunes the policies. The zero value is usable.
type Config struct {
	// Weights are fair_share tenant weights; absent tenants weigh DefaultWeight.
	Weights       map[string]int
	DefaultWeight int // < 1 means 1
	// DefaultDeadline is the SLO slo_aware assumes for requests without one
	// (default 30s).
	DefaultDeadline time.Duration
	// Fallback is hybrid's policy for LLM requests (default priority).
	Fallback string
	// SwitchEvery is how long adaptive keeps a choice before re-evaluating
	// (default 1s).
	SwitchEvery time.Duration
}

func (c Config) defaultDeadline() time.Duration {
	if c.DefaultDeadline <= 0 {
		return 30 * time.Second
	}
	return c.DefaultDeadline
}

// New returns a fresh, empty policy by name.
func New(name string, cfg Config) (Policy, error) {
	switch name {
	case FIFO:
		return &fifoPolicy{}, nil
	case Prio:
		return &priorityPolicy{}, nil
	case SLOAware:
		return &sloPolicy{def: cfg.defaultDeadline()}, nil
	case FairShare:
		return newFairShare(cfg), nil
	case Hybrid:
		return newHybrid(cfg)
	case Adaptive:
		return newAdaptive(cfg), nil
	}
	return nil, fmt.Errorf("unknown policy %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// fifoPolicy dispatches in admission order.
type fifoPolicy struct{ q fifoList }

func (p *fifoPolicy) Name() string        { return FIFO }
func (p *fifoPolicy) Push(it *Item)       { p.q.push(it) }
func (p *fifoPolicy) Pop(time.Time) *Item { return p.q.pop() }
func (p *fifoPolicy) Len() int            { return p.q.len() }
func (p *fifoPolicy) PopBatch(now time.Time, max int) []*Item {
	return popSameModel(&p.q, max)
}

// priorityPolicy dispatches the highest class first, fifo within a class.
// It is strict: a steady stream of critical work starves background work.
type priorityPolicy struct {
	q [numPriorities]fifoList
	n int
}

func (p *priorityPolicy) Name() string { return Prio }
func (p *priorityPolicy) Len() int     { return p.n }

func (p *priorityPolicy) Push(it *Item) {
	pr := it.Priority
	if pr < 0 || pr >= numPriorities {
		pr = PriorityNormal
	}
	p.q[pr].push(it)
	p.n++
}

func (p *priorityPolicy) Pop(time.Time) *Item {
	for pr := numPriorities - 1; pr >= 0; pr-- {
		if it := p.q[pr].pop(); it != nil {
			p.n--
			return it
		}
	}
	return nil
}

// sloPolicy dispatches the most urgent item: the largest elapsed/deadline
// at now (ties: earlier admission). Urgencies cross over time, so it scans.
type sloPolicy struct {
	items []*Item
	def   time.Duration
}

func (p *sloPolicy) Name() string  { return SLOAware }
func (p *sloPolicy) Len() int      { return len(p.items) }
func (p *sloPolicy) Push(it *Item) { p.items = append(p.items, it) }

func (p *sloPolicy) Pop(now time.Time) *Item {
	if len(p.items) == 0 {
		return nil
	}
	best, bu := 0, p.items[0].Urgency(now, p.def)
	for i := 1; i < len(p.items); i++ {
		u := p.items[i].Urgency(now, p.def)
		if u > bu || (u == bu && p.items[i].Seq < p.items[best].Seq) {
			best, bu = i, u
		}
	}
	it := p.items[best]
	copy(p.items[best:], p.items[best+1:])
	p.items[len(p.items)-1] = nil
	p.items = p.items[:len(p.items)-1]
	return it
}

// popSameModel pops the head and up to max-1 later items with its model.
func popSameModel(q *fifoList, max int) []*Item {
	head := q.pop()
	if head == nil {
		return nil
	}
	out := []*Item{head}
	for i := 0; i < q.len() && len(out) < max; {
		if q.items[q.head+i].Model == head.Model {
			out = append(out, q.removeAt(i))
			continue
		}
		i++
	}
	return out
}
