package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// LLM is a simulated text-generation engine (see the package doc). It is
// safe for concurrent use. Call Close to stop its loop.
type LLM struct {
	id    string
	p     profile.LLM
	clock Clock
	seed  uint64
	tok   tokenizer.Tokenizer
	tpl   *chattemplate.Template

	mailbox

	queued  atomic.Int64 // accepted by Generate, not yet admitted or dropped
	running atomic.Int64
	kvUsed  atomic.Int64
	stats   llmCounters

	st llmState // owned by the loop goroutine
}

var _ engine.LLM = (*LLM)(nil)

// NewLLM starts a simulated LLM engine with profile p. The profile's
// capacity and timing fields must be valid (profile.LLM.Validate; name and
// sources are not needed here); NewLLM panics otherwise, as that is a
// programming error: catalogs are validated when loaded.
func NewLLM(id string, p profile.LLM, opts Options) *LLM {
	if err := checkLLM(p); err != nil {
		panic(fmt.Sprintf("sim.NewLLM(%q): %v", id, err))
	}
	e := &LLM{
		id:    id,
		p:     p,
		clock: opts.clock(),
		seed:  uint64(opts.Seed),
		tok:   opts.Tokenizer,
		tpl:   opts.ChatTemplate,
	}
	e.mailbox.init()
	e.st = llmState{
		rng:   rand.New(rand.NewPCG(uint64(opts.Seed), 0x5ee0)),
		cache: newPrefixCache(p.KVCacheTokens / p.KVBlockTokens),
		slow:  1,
	}
	go e.loop()
	return e
}

func checkLLM(p profile.LLM) error {
	switch {
	case p.MaxNumSeqs <= 0, p.KVCacheTokens <= 0, p.KVBlockTokens <= 0,
		p.MaxWaiting <= 0, p.PrefillChunk <= 0, p.DefaultMaxTokens <= 0:
		return fmt.Errorf("profile %q: capacity fields must be > 0", p.Name)
	case p.StepBase <= 0, p.StepPerSeq < 0, p.PrefillPerToken < 0:
		return fmt.Errorf("profile %q: step_base must be > 0 and costs not negative", p.Name)
	case !(p.Jitter >= 0 && p.Jitter < 1):
		return fmt.Errorf("profile %q: jitter must be in [0,1)", p.Name)
	}
	return nil
}

// ID returns the engine id given to NewLLM.
func (e *LLM) ID() string { return e.id }

// Model returns the profile's model name.
func (e *LLM) Model() string { return e.p.Model }

// Profile returns the profile the engine simulates.
func (e *LLM) Profile() profile.LLM { return e.p }

// Load returns the engine's current occupancy.
func (e *LLM) Load() engine.Load {
	return engine.Load{
		Running:    int(e.running.Load()),
		Waiting:    int(e.queued.Load()),
		Slots:      e.p.MaxNumSeqs,
		KVUsed:     int(e.kvUsed.Load()),
		KVCapacity: e.p.KVCacheTokens,
	}
}

// Generate admits req into the waiting queue and returns its stream. It
// fails with engine.ErrOverloaded when the waiting queue is full, with an
// *engine.TooLargeError (engine.ErrTooLarge) when the request's KV
// reservation exceeds the engine's whole KV budget (a bigger engine may
// still take it), and with engine.ErrClosed after Close.
// MaxTokens <= 0 means the profile's default_max_tokens.
func (e *LLM) Generate(ctx context.Context, req engine.ChatRequest) (engine.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.closed.Load() {
		return nil, engine.ErrClosed
	}
	r := e.newRequest(req)
	if r.kv > e.p.KVCacheTokens {
		e.stats.rejected.Add(1)
		return nil, &engine.TooLargeError{Engine: e.id, Need: r.kv, Capacity: e.p.KVCacheTokens,
			Detail: fmt.Sprintf("prompt %d + max_tokens %d", r.prompt, r.maxTokens)}
	}
	if e.queued.Add(1) > int64(e.p.MaxWaiting) {
		e.queued.Add(-1)
		e.stats.rejected.Add(1)
		return nil, fmt.Errorf("%w: engine %s: %d requests waiting", engine.ErrOverloaded, e.id, e.p.MaxWaiting)
	}
	if err := e.post(func() { e.enqueue(r) }); err != nil {
		e.queued.Add(-1)
		return nil, err
	}
	return r.s, nil
}

// encode is the prompt's token IDs under the engine's tokenizer: the
// messages rendered with the chat template when there is one, else each
// message's content in turn, so that usage's prompt_tokens is the sum of
// the contents' lengths. Nil without a tokenizer.
func (e *LLM) encode(msgs []engine.Message) []int {
	if e.tok == nil {
		return nil
	}
	if e.tpl != nil {
		cm := make([]chattemplate.Message, len(msgs))
		for i, m := range msgs {
			cm[i] = chattemplate.Message{Role: m.Role, Content: m.Content}
		}
		if text, err := e.tpl.Render(cm, true); err == nil {
			return e.tok.Encode(text)
		}
	}
	var ids []int
	for _, m := range msgs {
		ids = append(ids, e.tok.Encode(m.Content)...)
	}
	return ids
}

func (e *LLM) newRequest(req engine.ChatRequest) *request {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = e.p.DefaultMaxTokens
	}
	ids := e.encode(req.Messages)
	prompt := len(ids)
	if prompt == 0 {
		prompt = CountTokens(req.Prompt)
	}
	prompt = max(prompt, 1)
	r := &request{prompt: prompt, maxTokens: maxTokens, kv: e.p.KVTokens(prompt, maxTokens), arrived: e.clock.Now()}
	if e.p.PrefixCache {
		if len(ids) > 0 {
			r.blocks = blockHashesIDs(ids, e.p.KVBlockTokens)
		} else {
			r.blocks = blockHashes(req.Prompt, e.p.KVBlockTokens)
		}
	}
	r.s = &stream{
		e:      e,
		r:      r,
		seed:   HashText(req.Prompt) ^ e.seed*0x9e3779b97f4a7c15,
		prompt: prompt,
		notify: make(chan struct{}, 1),
	}
	return r
}

// SetSlowdown multiplies the duration of every step started from now on by
// factor (a fault drill: thermal throttling, a noisy neighbour). 1 restores
// normal speed; non-positive or non-finite factors mean 1.
func (e *LLM) SetSlowdown(factor float64) {
	f := slowdownFactor(factor)
	_ = e.do(func() { e.st.slow = f })
}

// Pause freezes the engine like SIGSTOP: no step completes and no token is
// produced until Resume; requests are still queued (up to max_waiting).
func (e *LLM) Pause() { _ = e.do(func() { e.st.paused = true }) }

// Resume undoes Pause. A step that was due during the pause completes now.
func (e *LLM) Resume() { _ = e.do(e.resume) }

// Close stops the engine: every waiting or running request fails with
// engine.ErrClosed and later calls fail the same way. It waits for the loop
// to exit and is safe to call more than once.
func (e *LLM) Close() {
	e.mailbox.close()
}

// LLMStats are cumulative counters of an engine.
type LLMStats struct {
	Steps         int64 // engine iterations run
	Admitted      int64 // requests admitted into the running batch
	Rejected      int64 // requests refused with ErrOverloaded
	Cancelled     int64 // requests whose consumer closed the stream early
	Completed     int64 // requests that produced all their tokens
	TokensOut     int64 // generated tokens
	PrefillTokens int64 // prompt tokens computed
	CachedTokens  int64 // prompt tokens served by the prefix cache
	// Busy is the modelled duration of all steps run (jitter and slowdown
	// included): Busy over wall time is the engine's utilisation.
	Busy time.Duration
	// Late counts steps started late because the loop itself fell more
	// than 5 ms behind model time (an overloaded host).
	Late int64
}

type llmCounters struct {
	steps, admitted, rejected, cancelled, completed atomic.Int64
	tokensOut, prefillTokens, cachedTokens          atomic.Int64
	busy, late                                      atomic.Int64
}

// Stats returns the engine's cumulative counters.
func (e *LLM) Stats() LLMStats {
	c := &e.stats
	return LLMStats{
		Steps: c.steps.Load(), Admitted: c.admitted.Load(), Rejected: c.rejected.Load(),
		Cancelled: c.cancelled.Load(), Completed: c.completed.Load(), TokensOut: c.tokensOut.Load(),
		PrefillTokens: c.prefillTokens.Load(), CachedTokens: c.cachedTokens.Load(),
		Busy: time.Duration(c.busy.Load()), Late: c.late.Load(),
	}
}
