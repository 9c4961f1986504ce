package sched

import "time"

// adaptive delegates to one of fifo, priority, slo_aware and fair_share,
// re-choosing at most once per SwitchEvery on what is queued at Pop time:
//
//  1. at least a quarter of the queued requests carry a deadline → slo_aware;
//  2. else queued requests span two or more priority classes → priority;
//  3. else two or more tenants are queued and one holds more than half of
//     the queue → fair_share;
//  4. else fifo.
//
// With fewer than two queued requests there is no contention and it keeps
// its choice. A switch moves the queue to the new policy in admission order.
type adaptive struct {
	cfg        Config
	cur        Policy
	lastSwitch time.Time
	every      time.Duration
	withDL     int
	byPrio     [numPriorities]int
	byTenant   map[string]int
	n          int
}

func newAdaptive(cfg Config) *adaptive {
	every := cfg.SwitchEvery
	if every <= 0 {
		every = time.Second
	}
	return &adaptive{cfg: cfg, cur: &fifoPolicy{}, every: every, byTenant: map[string]int{}}
}

func (p *adaptive) Name() string { return Adaptive }
func (p *adaptive) Len() int     { return p.n }

// Current names the policy adaptive delegates to now.
func (p *adaptive) Current() string { return p.cur.Name() }

func (p *adaptive) Push(it *Item) {
	p.count(it, 1)
	p.cur.Push(it)
}

func (p *adaptive) Pop(now time.Time) *Item {
	if p.n >= 2 && (p.lastSwitch.IsZero() || now.Sub(p.lastSwitch) >= p.every) {
		if want := p.choose(); want != p.cur.Name() {
			next, _ := New(want, p.cfg) // want is always a known name
			Transfer(next, p.cur, now)
			p.cur = next
			p.lastSwitch = now
		}
	}
	it := p.cur.Pop(now)
	if it != nil {
		p.count(it, -1)
	}
	return it
}

func (p *adaptive) count(it *Item, d int) {
	p.n += d
	if it.Deadline > 0 {
		p.withDL += d
	}
	if it.Priority >= 0 && it.Priority < numPriorities {
		p.byPrio[it.Priority] += d
	}
	p.byTenant[it.Tenant] += d
	if p.byTenant[it.Tenant] == 0 {
		delete(p.byTenant, it.Tenant)
	}
}

func (p *adaptive) choose() string {
	if p.withDL*4 >= p.n {
		return SLOAware
	}
	classes := 0
	for _, c := range p.byPrio {
		if c > 0 {
			classes++
		}
	}
	if classes >= 2 {
		return Prio
	}
	if len(p.byTenant) >= 2 {
		for _, c := range p.byTenant {
			if c*2 > p.n {
				return FairShare
			}
		}
	}
	return FIFO
}
