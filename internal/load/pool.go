package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// job is one arrival handed from the pacer to a worker.
type job struct {
	i        int
	intended time.Time
}

// run is the shared state of one Driver run.
type run struct {
	clk         Clock
	hit         Hit
	hitCtx      context.Context
	cancelHits  context.CancelFunc
	lags        []atomic.Int64 // ns; written once per index by the worker that runs it
	maxInFlight int

	wg         sync.WaitGroup
	dispatched atomic.Int64
	completed  atomic.Int64
	active     atomic.Int64
	peak       atomic.Int64
}

func (r *run) enter() {
	n := r.active.Add(1)
	for {
		p := r.peak.Load()
		if n <= p || r.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (r *run) leave() { r.active.Add(-1) }

// do runs one job: measure the dispatch lag, call the hit.
func (r *run) do(j job) {
	now := r.clk.Now()
	r.lags[j.i].Store(int64(now.Sub(j.intended)))
	r.hit(r.hitCtx, j.i, j.intended)
	r.completed.Add(1)
}

// dispatcher hands jobs to goroutines. dispatch returns false when ctx
// was cancelled while it waited for a free slot.
type dispatcher interface {
	dispatch(ctx context.Context, j job) bool
	close()
}

// pool is a set of worker goroutines fed through an unbuffered channel:
// a send succeeds at once when a worker is idle; otherwise the pool grows
// by one worker, up to maxInFlight, beyond which the send waits.
type pool struct {
	r       *run
	jobs    chan job
	workers int
}

func (r *run) newPool(prestart int) *pool {
	p := &pool{r: r, jobs: make(chan job)}
	for range prestart {
		p.grow(nil)
	}
	return p
}

func (p *pool) grow(first *job) {
	p.workers++
	p.r.wg.Add(1)
	go p.work(first)
}

func (p *pool) work(first *job) {
	defer p.r.wg.Done()
	if first != nil {
		p.r.enter()
		p.r.do(*first)
		p.r.leave()
	}
	for j := range p.jobs {
		p.r.enter()
		p.r.do(j)
		p.r.leave()
	}
}

func (p *pool) dispatch(ctx context.Context, j job) bool {
	select {
	case p.jobs <- j:
		return true
	default:
	}
	if p.r.maxInFlight <= 0 || p.workers < p.r.maxInFlight {
		p.grow(&j)
		return true
	}
	select {
	case p.jobs <- j:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *pool) close() { close(p.jobs) }

// spawner starts one goroutine per arrival (bounded by maxInFlight with
// a semaphore). Kept for the measured comparison with pool.
type spawner struct {
	r   *run
	sem chan struct{}
}

func (r *run) spawner() *spawner {
	s := &spawner{r: r}
	if r.maxInFlight > 0 {
		s.sem = make(chan struct{}, r.maxInFlight)
	}
	return s
}

func (s *spawner) dispatch(ctx context.Context, j job) bool {
	if s.sem != nil {
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	s.r.wg.Add(1)
	go func() {
		defer s.r.wg.Done()
		s.r.enter()
		s.r.do(j)
		s.r.leave()
		if s.sem != nil {
			<-s.sem
		}
	}()
	return true
}

func (s *spawner) close() {}
