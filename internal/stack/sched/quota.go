package sched

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Quota limits one tenant. Zero fields mean unlimited.
type Quota struct {
	Weight        int     `yaml:"weight" json:"weight,omitempty"`                 // fair_share weight (default 1)
	MaxConcurrent int     `yaml:"max_concurrent" json:"max_concurrent,omitempty"` // queued + running requests
	Rate          float64 `yaml:"rate" json:"rate,omitempty"`                     // requests per second
	Burst         int     `yaml:"burst" json:"burst,omitempty"`                   // token bucket depth (default max(1, Rate))
}

// Validate reports the first impossible value.
func (q Quota) Validate() error {
	switch {
	case q.Weight < 0:
		return fmt.Errorf("weight %d: must be ≥ 0", q.Weight)
	case q.MaxConcurrent < 0:
		return fmt.Errorf("max_concurrent %d: must be ≥ 0", q.MaxConcurrent)
	case q.Rate < 0 || math.IsNaN(q.Rate) || math.IsInf(q.Rate, 0):
		return fmt.Errorf("rate %v: must be a finite number ≥ 0", q.Rate)
	case q.Burst < 0:
		return fmt.Errorf("burst %d: must be ≥ 0", q.Burst)
	}
	return nil
}

// QuotaError is returned by Admit when a tenant is over its quota.
type QuotaError struct {
	Tenant     string
	Reason     string // "concurrency" or "rate"
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("tenant %q over its %s quota; retry after %v", e.Tenant, e.Reason, e.RetryAfter)
}

// Quotas admits requests per tenant. It is safe for concurrent use.
type Quotas struct {
	def     Quota
	tenants map[string]Quota
	mu      sync.Mutex
	state   map[string]*tenantState
	sweepAt int // prune idle tenants when state grows to this size
}

// minSweep is the state size below which idle tenants are kept.
const minSweep = 1024

type tenantState struct {
	running int
	tokens  float64
	last    time.Time
}

// NewQuotas returns quotas with def for unnamed tenants.
func NewQuotas(def Quota, tenants map[string]Quota) *Quotas {
	return &Quotas{def: def, tenants: tenants, state: map[string]*tenantState{}}
}

func (q *Quotas) quota(tenant string) Quota {
	if t, ok := q.tenants[tenant]; ok {
		return t
	}
	return q.def
}

// Weights returns the fair_share weights of the named tenants.
func (q *Quotas) Weights() (map[string]int, int) {
	w := map[string]int{}
	for name, t := range q.tenants {
		if t.Weight > 0 {
			w[name] = t.Weight
		}
	}
	return w, q.def.Weight
}

// Admit takes one concurrency slot and one rate token for tenant at now.
// On success the caller must call the returned release exactly once when
// the request ends. On refusal it returns a *QuotaError.
func (q *Quotas) Admit(tenant string, now time.Time) (release func(), err error) {
	qt := q.quota(tenant)
	if qt.MaxConcurrent == 0 && qt.Rate == 0 {
		return func() {}, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.state[tenant]
	if st == nil {
		if len(q.state) >= max(q.sweepAt, minSweep) {
			q.sweep(now)
		}
		st = &tenantState{tokens: burst(qt), last: now}
		q.state[tenant] = st
	}
	if qt.MaxConcurrent > 0 && st.running >= qt.MaxConcurrent {
		return nil, &QuotaError{Tenant: tenant, Reason: "concurrency", RetryAfter: time.Second}
	}
	if qt.Rate > 0 {
		st.tokens = math.Min(burst(qt), st.tokens+now.Sub(st.last).Seconds()*qt.Rate)
		st.last = now
		if st.tokens < 1 {
			wait := time.Duration((1 - st.tokens) / qt.Rate * float64(time.Second))
			return nil, &QuotaError{Tenant: tenant, Reason: "rate", RetryAfter: wait}
		}
		st.tokens--
	}
	st.running++
	var once sync.Once
	return func() { once.Do(func() { q.release(tenant) }) }, nil
}

func (q *Quotas) release(tenant string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if st := q.state[tenant]; st != nil {
		st.running--
		if st.running == 0 && q.quota(tenant).Rate == 0 {
			delete(q.state, tenant) // nothing to remember; bounds the map
		}
	}
}

// sweep forgets tenants with nothing running whose bucket has refilled at
// now: their state equals a fresh one. Tenant ids come from a request
// header, so the map must not keep every id ever seen. The next sweep
// waits until the map has doubled, so sweeping costs O(1) per admission.
func (q *Quotas) sweep(now time.Time) {
	for name, st := range q.state {
		qt := q.quota(name)
		if st.running == 0 && st.tokens+now.Sub(st.last).Seconds()*qt.Rate >= burst(qt) {
			delete(q.state, name)
		}
	}
	q.sweepAt = 2 * len(q.state)
}

func burst(q Quota) float64 {
	if q.Burst > 0 {
		return float64(q.Burst)
	}
	return math.Max(1, q.Rate)
}
