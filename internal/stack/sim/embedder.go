package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Embedder is a simulated embedding engine with dynamic batching (see the
// package doc). It is safe for concurrent use. Call Close to stop its loop.
type Embedder struct {
	id    string
	p     profile.Embedder
	clock Clock
	count func(string) int // an input's tokens (Options.Tokenizer with its post-processor's special tokens, else CountTokens)

	mailbox

	queued  atomic.Int64 // inputs accepted, not yet in a batch
	running atomic.Int64 // inputs in the current batch
	stats   embedCounters

	st embedState // owned by the loop goroutine
}

var _ engine.Embedder = (*Embedder)(nil)

// embedJob is one Embed call; its inputs may span several batches.
type embedJob struct {
	tokens    []int     // per input
	arrived   time.Time // when Embed was called (taken by the caller)
	next      int       // first input not yet put in a batch
	remaining int       // inputs not yet embedded
	cancelled bool
	done      chan struct{} // closed when every input is embedded or the job failed
	err       error
}

type batchPart struct {
	job *embedJob
	n   int
}

type embedState struct {
	queue   []*embedJob
	head    int
	pending int // inputs in queue not yet in a batch
	batch   []batchPart
	timer   Timer
	timerAt time.Time
	busy    bool // a batch is running (else the timer is the max-wait deadline)
	paused  bool
	pendEnd bool // the batch ended while paused
	slow    float64
	rng     *rand.Rand
}

// NewEmbedder starts a simulated embedding engine with profile p. Like
// NewLLM it panics on a profile with impossible capacity or timing fields.
func NewEmbedder(id string, p profile.Embedder, opts Options) *Embedder {
	if p.Dim <= 0 || p.MaxBatch <= 0 || p.MaxQueue <= 0 || p.MaxWait < 0 ||
		p.BatchOverhead < 0 || p.PerToken < 0 || !(p.Jitter >= 0 && p.Jitter < 1) {
		panic(fmt.Sprintf("sim.NewEmbedder(%q): profile %q has impossible values", id, p.Name))
	}
	e := &Embedder{
		id: id, p: p, clock: opts.clock(), count: CountTokens,
	}
	if tok := opts.Tokenizer; tok != nil { // as an embedding server counts an input: add_special_tokens=True
		e.count = func(s string) int { return tokenizer.CountWithSpecialTokens(tok, s) }
	}
	e.mailbox.init()
	e.st = embedState{slow: 1, rng: rand.New(rand.NewPCG(uint64(opts.Seed), 0xe3b))}
	go e.loop()
	return e
}

// ID returns the engine id given to NewEmbedder.
func (e *Embedder) ID() string { return e.id }

// Model returns the profile's model name.
func (e *Embedder) Model() string { return e.p.Model }

// Profile returns the profile the engine simulates.
func (e *Embedder) Profile() profile.Embedder { return e.p }

// Load reports inputs in the running batch and inputs queued.
func (e *Embedder) Load() engine.Load {
	return engine.Load{Running: int(e.running.Load()), Waiting: int(e.queued.Load()), Slots: e.p.MaxBatch}
}

// ErrNoInput is returned by Embed with an empty input list.
var ErrNoInput = errors.New("embed: no inputs")

// Embed queues inputs, waits for the batches carrying them to run and
// returns their vectors (sim.Vector of each input at the profile's
// dimension). It fails with engine.ErrOverloaded when max_queue inputs are
// already queued, engine.ErrClosed after Close, and ctx.Err() when ctx is
// done first (the inputs not yet batched are dropped).
func (e *Embedder) Embed(ctx context.Context, inputs []string) ([][]float32, engine.Usage, error) {
	job, usage, err := e.submit(ctx, inputs)
	if err != nil {
		return nil, engine.Usage{}, err
	}
	select {
	case <-job.done:
	case <-ctx.Done():
		_ = e.post(func() { e.cancel(job) })
		return nil, engine.Usage{}, ctx.Err()
	case <-e.done:
		return nil, engine.Usage{}, engine.ErrClosed
	}
	if job.err != nil {
		return nil, engine.Usage{}, job.err
	}
	out := make([][]float32, len(inputs))
	for i, in := range inputs {
		out[i] = corpus.Vector(in, e.p.Dim)
	}
	return out, usage, nil
}

// SetSlowdown multiplies the duration of batches started from now on.
func (e *Embedder) SetSlowdown(factor float64) {
	f := slowdownFactor(factor)
	_ = e.do(func() { e.st.slow = f })
}

// Pause freezes the engine like SIGSTOP until Resume.
func (e *Embedder) Pause() { _ = e.do(func() { e.st.paused = true }) }

// Resume undoes Pause.
func (e *Embedder) Resume() { _ = e.do(e.resume) }

// Close fails queued and running inputs with engine.ErrClosed and stops
// the loop. It is safe to call more than once.
func (e *Embedder) Close() {
	e.mailbox.close()
}

// EmbedderStats are cumulative counters of an embedding engine.
type EmbedderStats struct {
	Batches  int64 // batches run
	Inputs   int64 // inputs embedded
	Tokens   int64 // input tokens embedded
	Rejected int64 // Embed calls refused with ErrOverloaded
}

type embedCounters struct {
	batches, inputs, tokens, rejected atomic.Int64
}

// Stats returns the engine's cumulative counters.
func (e *Embedder) Stats() EmbedderStats {
	c := &e.stats
	return EmbedderStats{Batches: c.batches.Load(), Inputs: c.inputs.Load(), Tokens: c.tokens.Load(), Rejected: c.rejected.Load()}
}

// submit counts and queues the inputs of one Embed call.
func (e *Embedder) submit(ctx context.Context, inputs []string) (*embedJob, engine.Usage, error) {
	if len(inputs) == 0 {
		return nil, engine.Usage{}, ErrNoInput
	}
	if err := ctx.Err(); err != nil {
		return nil, engine.Usage{}, err
	}
	if e.closed.Load() {
		return nil, engine.Usage{}, engine.ErrClosed
	}
	job := &embedJob{tokens: make([]int, len(inputs)), remaining: len(inputs), done: make(chan struct{}), arrived: e.clock.Now()}
	var usage engine.Usage
	for i, in := range inputs {
		job.tokens[i] = max(e.count(in), 1)
		usage.PromptTokens += job.tokens[i]
	}
	if n := e.queued.Add(int64(len(inputs))); n > int64(e.p.MaxQueue) {
		e.queued.Add(-int64(len(inputs)))
		e.stats.rejected.Add(1)
		return nil, engine.Usage{}, fmt.Errorf("%w: engine %s: %d inputs queued (max_queue %d)",
			engine.ErrOverloaded, e.id, n-int64(len(inputs)), e.p.MaxQueue)
	}
	if err := e.post(func() { e.enqueue(job) }); err != nil {
		e.queued.Add(-int64(len(inputs)))
		return nil, engine.Usage{}, err
	}
	return job, usage, nil
}
