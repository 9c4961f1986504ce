package fedavg

import (
	"math"
	"runtime"
	"sync"
)

// Config configures an Aggregator. The zero value is valid: automatic
// worker count, no clipping.
type Config struct {
	// Workers is the worker count: Auto (0) resolves per call with
	// Machine.Workers; a positive count is clamped to [1, clients].
	Workers int
	// Machine models the machine for Auto (see Probe); the zero value is
	// the fallback of ResolveWorkers.
	Machine Machine
	// ClipNorm > 0 rescales every aggregate whose L2 norm exceeds it to
	// norm ClipNorm (up to float32 rounding). 0 disables clipping.
	ClipNorm float64
}

// Validate reports a negative worker count or a clip norm that is
// negative, NaN or infinite.
func (c Config) Validate() error {
	if c.Workers < 0 {
		return inputErr(ErrParam, -1, -1, "workers %d is negative; use 0 for auto or a positive count", c.Workers)
	}
	if c.ClipNorm < 0 || math.IsNaN(c.ClipNorm) || math.IsInf(c.ClipNorm, 0) {
		return inputErr(ErrParam, -1, -1, "clip norm %v must be finite and >= 0 (0 disables clipping)", c.ClipNorm)
	}
	return c.Machine.Validate()
}

// Aggregator combines client updates. It owns a pool of worker goroutines
// and scratch buffers reused across calls, so steady-state calls do not
// allocate. Calls are serialised by a mutex; use one Aggregator per
// concurrent caller for parallel rounds. Close stops the workers; an
// Aggregator that becomes unreachable without Close is stopped by a
// cleanup.
type Aggregator struct {
	*engine
}

// engine is the state the worker goroutines reference; Aggregator wraps
// it so that the wrapper can become unreachable while workers run.
type engine struct {
	mu     sync.Mutex
	cfg    Config
	pool   *Pool
	body   func(worker, tile int) // calls op; built once, so Run does not allocate
	closed bool
	op     tileFunc

	// inputs of the running operation
	updates [][]float32
	dst     []float32
	wn      []float32 // normalised weights
	trim    int
	tile    int // coordinates per tile

	// per-worker scratch
	acc [][]float64 // FedAvg accumulator tiles
	col [][]float32 // one coordinate across clients
	// per-tile results, merged in tile order (deterministic)
	bad []int // first non-finite coordinate in the tile, or -1

	dist []float64 // Multi-Krum pairwise squared distances, n×n
}

// tileFunc is the body of one operation for one tile. Operations are
// top-level functions, so storing one in engine.op does not allocate.
type tileFunc func(e *engine, worker, tile int)

// New returns an Aggregator for cfg.
func New(cfg Config) (*Aggregator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, pool: NewPool()}
	e.body = func(w, t int) { e.op(e, w, t) }
	a := &Aggregator{engine: e}
	runtime.AddCleanup(a, func(e *engine) { e.shutdown() }, e)
	return a, nil
}

// Close stops the worker goroutines. Calls after Close fall back to a
// single worker.
func (a *Aggregator) Close() { a.shutdown() }

func (e *engine) shutdown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		e.pool.Close()
	}
}

// prepare stores the operation's inputs, sizes scratch and per-tile
// results, and returns the worker and tile counts.
func (e *engine) prepare(dst []float32, updates [][]float32, dim int) (workers, tiles int) {
	workers = e.workers(len(updates), dim)
	e.tile = tileLen(dim, workers)
	tiles = (dim + e.tile - 1) / e.tile
	workers = min(workers, tiles)
	for len(e.acc) < workers {
		e.acc = append(e.acc, make([]float64, maxTile))
		e.col = append(e.col, nil)
	}
	for i := range workers {
		if cap(e.col[i]) < len(updates) {
			e.col[i] = make([]float32, len(updates))
		}
		e.col[i] = e.col[i][:len(updates)]
	}
	if cap(e.bad) < tiles {
		e.bad = make([]int, tiles)
	}
	e.bad = e.bad[:tiles]
	e.dst, e.updates = dst, updates
	return workers, tiles
}

// exec runs op over tiles with workers.
func (e *engine) exec(workers, tiles int, op tileFunc) {
	e.op = op
	e.pool.Run(workers, tiles, e.body)
	e.op = nil
}

// release drops references to caller memory.
func (e *engine) release() {
	e.dst, e.updates = nil, nil
}

// span returns the coordinates [lo, hi) of tile t.
func (e *engine) span(t int) (lo, hi int) {
	lo = t * e.tile
	return lo, min(lo+e.tile, len(e.dst))
}

// workers resolves the worker count for this call.
func (e *engine) workers(clients, dim int) int {
	if e.closed {
		return 1
	}
	return e.cfg.Machine.Workers(clients, dim, e.cfg.Workers)
}

// checkShape validates that updates is non-empty, rectangular, and that
// dst has the same dimension. It returns the dimension.
func checkShape(dst []float32, updates [][]float32) (int, error) {
	if len(updates) == 0 {
		return 0, inputErr(ErrEmpty, -1, -1, "no client updates")
	}
	dim := len(updates[0])
	if dim == 0 {
		return 0, inputErr(ErrEmpty, 0, -1, "update of dimension 0")
	}
	for i, u := range updates {
		if len(u) != dim {
			return 0, inputErr(ErrLength, i, -1, "update has %d values, client 0 has %d", len(u), dim)
		}
	}
	if len(dst) != dim {
		return 0, inputErr(ErrLength, -1, -1, "dst has %d values, updates have %d", len(dst), dim)
	}
	return dim, nil
}

// normaliseWeights writes weights/sum(weights) into e.wn as float32. A nil
// weights slice means equal weights.
func (e *engine) normaliseWeights(n int, weights []float64) error {
	if cap(e.wn) < n {
		e.wn = make([]float32, n)
	}
	e.wn = e.wn[:n]
	if weights == nil {
		for i := range e.wn {
			e.wn[i] = float32(1 / float64(n))
		}
		return nil
	}
	if err := checkWeights(weights, n); err != nil {
		return err
	}
	total := 0.0
	for _, w := range weights {
		total += w
	}
	if math.IsInf(total, 0) {
		return inputErr(ErrWeight, -1, -1, "weights sum to +Inf")
	}
	for i, w := range weights {
		e.wn[i] = float32(w / total)
	}
	return nil
}

// checkWeights validates n weights (nil is valid: equal weights).
func checkWeights(weights []float64, n int) error {
	if weights == nil {
		return nil
	}
	if len(weights) != n {
		return inputErr(ErrLength, -1, -1, "%d weights for %d updates", len(weights), n)
	}
	for i, w := range weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return inputErr(ErrWeight, i, -1, "weight %v must be a finite sample count > 0", w)
		}
	}
	return nil
}

// finish merges the per-worker results of an operation that wrote dst:
// it reports the first non-finite coordinate, then applies clipping.
func (e *engine) finish(dst []float32, updates [][]float32) error {
	for _, b := range e.bad {
		if b >= 0 {
			return locateNonFinite(updates, b)
		}
	}
	e.clip(dst)
	return nil
}

// clip rescales dst to L2 norm cfg.ClipNorm if its norm is larger. The
// norm is summed from dst after the tiles, in an order that depends only
// on len(dst) (tiles depend on the worker count), so a clipped result is
// bit-identical for every worker count too; the tiles' rounding loops
// carry no float64 dependency chain for it (one pass over dst, 4·dim
// bytes, is far cheaper).
func (e *engine) clip(dst []float32) {
	limit := e.cfg.ClipNorm
	if limit <= 0 {
		return
	}
	norm := math.Sqrt(sumSquares(dst))
	if norm <= limit {
		return
	}
	scale := limit / norm
	for i, v := range dst {
		dst[i] = float32(float64(v) * scale)
	}
}

// sumSquares is Σ v² in float64, in four interleaved partial sums (a
// fixed order for a given length).
func sumSquares(v []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		a, b, c, d := float64(v[i]), float64(v[i+1]), float64(v[i+2]), float64(v[i+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i]) * float64(v[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// locateNonFinite names the client holding a non-finite value at
// coordinate j; if none does, the mean itself overflowed float32.
func locateNonFinite(updates [][]float32, j int) error {
	for c, u := range updates {
		if v := u[j]; v-v != 0 {
			return inputErr(ErrNonFinite, c, j, "value %v", v)
		}
	}
	return inputErr(ErrNonFinite, -1, j, "the aggregate overflows float32")
}

// scanNonFinite returns an error for the first NaN or ±Inf in updates.
func scanNonFinite(updates [][]float32) error {
	for c, u := range updates {
		for j, v := range u {
			if v-v != 0 {
				return inputErr(ErrNonFinite, c, j, "value %v", v)
			}
		}
	}
	return nil
}
