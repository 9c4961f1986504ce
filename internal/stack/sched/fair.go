package sched

import "time"

// fairShare is weighted deficit round robin over tenants: each visit adds
// weight×quantum to a tenant's deficit; a tenant is served while its head
// item's cost fits in the deficit. Over a contended period each tenant gets
// dispatched cost in proportion to its weight.
type fairShare struct {
	cfg     Config
	tenants map[string]*tenantQueue
	ring    []*tenantQueue // active tenants in round-robin order
	cur     int            // index into ring of the tenant being served
	n       int
}

type tenantQueue struct {
	name    string
	q       fifoList
	deficit int
	fresh   bool // the quantum for the current visit has not been added yet
}

// quantum is the deficit added per visit and unit of weight; one request
// of cost ≤ quantum per unit weight per round.
const quantum = 1

func newFairShare(cfg Config) *fairShare {
	return &fairShare{cfg: cfg, tenants: map[string]*tenantQueue{}}
}

func (p *fairShare) Name() string { return FairShare }
func (p *fairShare) Len() int     { return p.n }

func (p *fairShare) weight(tenant string) int {
	if w, ok := p.cfg.Weights[tenant]; ok && w > 0 {
		return w
	}
	if p.cfg.DefaultWeight > 0 {
		return p.cfg.DefaultWeight
	}
	return 1
}

func (p *fairShare) Push(it *Item) {
	t := p.tenants[it.Tenant]
	if t == nil {
		t = &tenantQueue{name: it.Tenant, fresh: true}
		p.tenants[it.Tenant] = t
	}
	if t.q.len() == 0 {
		t.fresh, t.deficit = true, 0
		p.ring = append(p.ring, t)
	}
	t.q.push(it)
	p.n++
}

// Pop serves costs in weighted round robin. Costs are counted in requests
// (every item costs one unit), so weights divide request slots.
func (p *fairShare) Pop(time.Time) *Item {
	for p.n > 0 {
		if p.cur >= len(p.ring) {
			p.cur = 0
		}
		t := p.ring[p.cur]
		if t.fresh {
			t.deficit += p.weight(t.name) * quantum
			t.fresh = false
		}
		if t.deficit >= 1 {
			it := t.q.pop()
			t.deficit--
			p.n--
			if t.q.len() == 0 {
				p.removeCur()
			}
			return it
		}
		t.fresh = true
		p.cur++
	}
	return nil
}

func (p *fairShare) removeCur() {
	t := p.ring[p.cur]
	t.deficit, t.fresh = 0, true
	copy(p.ring[p.cur:], p.ring[p.cur+1:])
	p.ring[len(p.ring)-1] = nil
	p.ring = p.ring[:len(p.ring)-1]
	delete(p.tenants, t.name)
}
