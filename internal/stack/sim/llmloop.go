package sim

import (
	"io"
	"math/rand/v2"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// request is one generation inside the engine. Fields other than s are
// owned by the loop goroutine.
type request struct {
	s         *stream
	prompt    int      // prompt tokens
	maxTokens int      // output tokens to produce
	kv        int      // KV tokens reserved while admitted
	blocks    []uint64 // chained hashes of full prompt blocks (prefix cache)
	arrived   time.Time

	admitted    bool
	finished    bool // completed, cancelled or failed: holds no slot or KV
	prefilled   int  // prompt tokens whose KV exists (cached or computed)
	stepPrefill int  // prompt tokens prefilled in the current step
	generated   int
}

// llmState is the scheduler state, touched only by the loop goroutine.
type llmState struct {
	waiting []*request // FIFO from head; finished entries are skipped
	head    int
	running []*request // admission order
	kvUsed  int
	cache   *prefixCache
	rng     *rand.Rand

	timer      Timer
	stepping   bool
	stepEnd    time.Time
	idleSince  time.Time // when the last step ended with nothing left to run
	paused     bool
	pendingEnd bool // the step ended while paused
	slow       float64
}

func (e *LLM) loop() {
	defer close(e.done)
	for {
		var tc <-chan time.Time
		if e.st.timer != nil {
			tc = e.st.timer.C()
		}
		select { // a due step ends before any command is looked at
		case <-tc:
			e.onStepEnd()
			continue
		default:
		}
		select {
		case <-tc:
			e.onStepEnd()
		case cmd := <-e.cmds:
			if cmd == nil {
				e.shutdown()
				return
			}
			cmd()
		}
	}
}

// shutdown runs the commands already posted (failing their requests), then
// fails everything still held.
func (e *LLM) shutdown() {
	for {
		select {
		case cmd := <-e.cmds:
			if cmd != nil {
				cmd()
			}
			continue
		default:
		}
		break
	}
	st := &e.st
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	for _, r := range st.running {
		e.fail(r, engine.ErrClosed)
	}
	for _, r := range st.waiting[st.head:] {
		e.fail(r, engine.ErrClosed)
	}
	st.running, st.waiting, st.head = nil, nil, 0
	e.publish()
}

func (e *LLM) enqueue(r *request) {
	if e.closed.Load() {
		e.fail(r, engine.ErrClosed)
		return
	}
	st := &e.st
	st.waiting = append(st.waiting, r)
	if !st.stepping && !st.paused {
		// An idle engine starts at the request's arrival (taken by the
		// caller), so the hop to this loop does not count as engine time.
		start := r.arrived
		if st.idleSince.After(start) {
			start = st.idleSince
		}
		e.startStep(e.notTooLate(start))
	}
}

// cancel frees r's slot and KV at once (its consumer went away).
func (e *LLM) cancel(r *request) {
	if r.finished {
		return
	}
	e.stats.cancelled.Add(1)
	e.release(r)
	e.publish()
}

// release marks r finished and returns what it held.
func (e *LLM) release(r *request) {
	r.finished = true
	if r.admitted {
		e.st.kvUsed -= r.kv
	} else {
		e.queued.Add(-1)
	}
}

func (e *LLM) fail(r *request, err error) {
	if r.finished {
		return
	}
	e.release(r)
	r.s.finish(err)
}

func (e *LLM) resume() {
	st := &e.st
	if !st.paused {
		return
	}
	st.paused = false
	now := e.clock.Now()
	switch {
	case st.pendingEnd:
		st.pendingEnd = false
		e.finishStep()
		e.startStep(now)
	case !st.stepping:
		e.startStep(now)
	}
}

func (e *LLM) onStepEnd() {
	st := &e.st
	st.timer = nil
	if st.paused {
		st.pendingEnd = true
		return
	}
	e.finishStep()
	// Back to back: the next step starts when this one ended, so timer
	// latency does not accumulate; but a loop more than maxLag late (an
	// overloaded host) restarts from now instead of bursting to catch up.
	e.startStep(e.notTooLate(st.stepEnd))
}

// notTooLate returns start, or now when start is more than maxLag ago.
func (e *LLM) notTooLate(start time.Time) time.Time {
	if now := e.clock.Now(); now.Sub(start) > maxLag {
		e.stats.late.Add(1)
		return now
	}
	return start
}

// maxLag is how late the loop may handle a step end and still chain the
// next step to the modelled end time.
const maxLag = 5 * time.Millisecond

// startStep plans the next step at time at and arms its timer; with
// nothing to run the engine goes idle.
func (e *LLM) startStep(at time.Time) {
	st := &e.st
	seqs, prefill := e.plan()
	e.publish()
	if seqs == 0 {
		if st.stepping {
			st.idleSince = at
		}
		st.stepping = false
		return
	}
	d := float64(e.p.IterationTime(seqs, prefill))
	d *= jitterFactor(e.p.Jitter, st.rng.Float64()) * st.slow
	st.stepEnd = at.Add(time.Duration(d))
	st.stepping = true
	st.timer = e.clock.NewTimer(st.stepEnd.Sub(e.clock.Now()))
	e.stats.steps.Add(1)
	e.stats.busy.Add(int64(d))
	e.stats.prefillTokens.Add(int64(prefill))
}

// plan chooses the work of the next step, as vLLM's scheduler does with
// chunked prefill: every decoding sequence takes one token of the step's
// budget (prefill_chunk_tokens), sequences still prefilling take chunks of
// what is left in admission order, and waiting requests are admitted FCFS
// while a slot, budget and their whole KV reservation are free. It returns
// the sequences in the step and the prompt tokens it prefills.
func (e *LLM) plan() (seqs, prefill int) {
	st := &e.st
	live := st.running[:0]
	for _, r := range st.running {
		if !r.finished {
			live = append(live, r)
		}
	}
	clear(st.running[len(live):])
	st.running = live

	budget := e.p.PrefillChunk
	for _, r := range live {
		r.stepPrefill = 0
		if r.prefilled >= r.prompt {
			seqs++
			budget--
		}
	}
	for _, r := range live {
		if r.prefilled < r.prompt && budget > 0 {
			n := min(r.prompt-r.prefilled, budget)
			r.stepPrefill, budget, prefill, seqs = n, budget-n, prefill+n, seqs+1
		}
	}
	for budget > 0 && len(st.running) < e.p.MaxNumSeqs {
		r := e.nextWaiting()
		if r == nil || st.kvUsed+r.kv > e.p.KVCacheTokens {
			break
		}
		e.admit(r)
		n := min(r.prompt-r.prefilled, budget)
		r.stepPrefill, budget, prefill, seqs = n, budget-n, prefill+n, seqs+1
	}
	return seqs, prefill
}

// nextWaiting returns the head of the waiting queue, skipping requests
// cancelled while waiting.
func (e *LLM) nextWaiting() *request {
	st := &e.st
	for st.head < len(st.waiting) {
		r := st.waiting[st.head]
		if !r.finished {
			return r
		}
		st.waiting[st.head] = nil
		st.head++
	}
	st.waiting, st.head = st.waiting[:0], 0
	return nil
}

func (e *LLM) admit(r *request) {
	st := &e.st
	st.waiting[st.head] = nil
	st.head++
	if st.head > 64 && st.head*2 > len(st.waiting) {
		n := copy(st.waiting, st.waiting[st.head:])
		clear(st.waiting[n:])
		st.waiting, st.head = st.waiting[:n], 0
	}
	e.queued.Add(-1)
	r.admitted = true
	st.kvUsed += r.kv
	if len(r.blocks) > 0 {
		cached := st.cache.match(r.blocks) * e.p.KVBlockTokens
		r.prefilled = min(cached, r.prompt-1) // the last prompt token is always computed
		r.s.setCached(r.prefilled)
		e.stats.cachedTokens.Add(int64(r.prefilled))
	}
	st.running = append(st.running, r)
	e.stats.admitted.Add(1)
}

// finishStep applies the effects of the step that just ended: prefill
// progress, one token for every sequence that decoded or finished its
// prefill, and completion of requests that reached max_tokens.
func (e *LLM) finishStep() {
	for _, r := range e.st.running {
		if r.finished {
			continue
		}
		if r.stepPrefill > 0 {
			r.prefilled += r.stepPrefill
			r.stepPrefill = 0
			if r.prefilled < r.prompt {
				continue
			}
			e.st.cache.insert(r.blocks)
		} else if r.prefilled < r.prompt {
			continue // got no prefill budget this step
		}
		r.generated++
		r.s.push()
		e.stats.tokensOut.Add(1)
		if r.generated >= r.maxTokens {
			e.release(r)
			r.s.finish(io.EOF)
			e.stats.completed.Add(1)
		}
	}
	e.publish()
}

// publish refreshes the atomics Load reads.
func (e *LLM) publish() {
	n := 0
	for _, r := range e.st.running {
		if !r.finished {
			n++
		}
	}
	e.running.Store(int64(n))
	e.kvUsed.Store(int64(e.st.kvUsed))
}
