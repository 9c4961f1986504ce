package fedavg

import (
	"math"
	"sync"
	"sync/atomic"
)

// Pool runs loops of independent tiles on long-lived goroutines. The
// calling goroutine works too, and every participant claims the next
// unclaimed tile from a shared counter, so a worker the OS deschedules (or
// one that wakes late) costs only the tile it holds, not its whole share.
// A steady-state Run does not allocate. A Pool is used by one goroutine at
// a time; Close stops its goroutines.
type Pool struct {
	wake     chan wakeMsg  // one message per helper per Run
	done     chan struct{} // a helper that finishes the last tile signals
	state    atomic.Uint64 // epoch<<32 | next unclaimed tile
	tiles    atomic.Int64  // tile count of the current epoch
	finished atomic.Int64  // tiles finished in the current epoch
	epoch    uint32
	body     func(worker, tile int)
	started  int
	once     sync.Once
}

type wakeMsg struct {
	epoch  uint32
	worker int
}

// NewPool returns a Pool with no goroutines yet; Run starts them on first
// need.
func NewPool() *Pool {
	return &Pool{wake: make(chan wakeMsg, 256), done: make(chan struct{}, 1)}
}

// Run calls body(worker, tile) once for every tile in [0, tiles), with at
// most workers goroutines (the caller is worker 0), and returns when all
// calls have returned. worker indices are distinct among concurrent calls,
// so body may use per-worker scratch. workers is capped at 256.
func (p *Pool) Run(workers, tiles int, body func(worker, tile int)) {
	if tiles <= 0 {
		return
	}
	workers = min(workers, tiles, cap(p.wake))
	// Close claiming first: a helper still looping in the previous epoch
	// may have loaded the old state; once the state word has changed its
	// compare-and-swap fails, so it can never pair the old state with the
	// new tile count (which would run a tile of this epoch twice).
	p.epoch++
	p.state.Store(uint64(p.epoch)<<32 | math.MaxUint32)
	p.body = body
	p.tiles.Store(int64(tiles))
	p.finished.Store(0)
	p.state.Store(uint64(p.epoch) << 32) // publishes body and tiles
	for p.started < workers-1 {
		p.started++
		go p.loop()
	}
	for w := 1; w < workers; w++ {
		p.wake <- wakeMsg{p.epoch, w}
	}
	if !p.work(p.epoch, 0) {
		<-p.done
	}
}

// Close stops the goroutines once they drain their messages. Run must not
// be called after Close.
func (p *Pool) Close() { p.once.Do(func() { close(p.wake) }) }

func (p *Pool) loop() {
	for m := range p.wake {
		if p.work(m.epoch, m.worker) {
			p.done <- struct{}{}
		}
	}
}

// work claims and runs tiles of epoch until none is left; it reports
// whether it finished the last tile. A helper holding a stale epoch claims
// nothing: its compare-and-swap fails once the epoch has moved on.
func (p *Pool) work(epoch uint32, w int) (last bool) {
	for {
		s := p.state.Load()
		if uint32(s>>32) != epoch || int64(uint32(s)) >= p.tiles.Load() {
			return false
		}
		if !p.state.CompareAndSwap(s, s+1) {
			continue
		}
		p.body(w, int(uint32(s)))
		if p.finished.Add(1) == p.tiles.Load() {
			return true
		}
	}
}
