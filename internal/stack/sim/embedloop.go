package sim

import (
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

func (e *Embedder) loop() {
	defer close(e.done)
	for {
		var tc <-chan time.Time
		if e.st.timer != nil {
			tc = e.st.timer.C()
		}
		select {
		case <-tc:
			e.onTimer()
			continue
		default:
		}
		select {
		case <-tc:
			e.onTimer()
		case cmd := <-e.cmds:
			if cmd == nil {
				e.shutdown()
				return
			}
			cmd()
		}
	}
}

func (e *Embedder) shutdown() {
	for drained := false; !drained; {
		select {
		case cmd := <-e.cmds:
			if cmd != nil {
				cmd()
			}
		default:
			drained = true
		}
	}
	st := &e.st
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	for _, part := range st.batch {
		e.failJob(part.job)
	}
	for _, j := range st.queue[st.head:] {
		e.failJob(j)
	}
	st.batch, st.queue, st.head = nil, nil, 0
	e.queued.Store(0)
	e.running.Store(0)
}

func (e *Embedder) failJob(j *embedJob) {
	if j.remaining > 0 && j.err == nil {
		j.err = engine.ErrClosed
		j.remaining = 0
		close(j.done)
	}
}

func (e *Embedder) enqueue(j *embedJob) {
	if e.closed.Load() {
		e.queued.Add(-int64(len(j.tokens)))
		e.failJob(j)
		return
	}
	e.st.queue = append(e.st.queue, j)
	e.st.pending += len(j.tokens)
	now := e.clock.Now()
	if now.Sub(j.arrived) > maxLag { // the loop is far behind: time from now
		j.arrived = now
	}
	e.schedule(now)
}

// cancel drops the inputs of j not yet in a batch.
func (e *Embedder) cancel(j *embedJob) {
	if j.cancelled || j.remaining == 0 {
		return
	}
	j.cancelled = true
	e.queued.Add(-int64(len(j.tokens) - j.next))
	e.st.pending -= len(j.tokens) - j.next
	j.next = len(j.tokens)
}

func (e *Embedder) resume() {
	st := &e.st
	if !st.paused {
		return
	}
	st.paused = false
	now := e.clock.Now()
	if st.pendEnd {
		st.pendEnd = false
		e.finishBatch()
	}
	e.schedule(now)
}

func (e *Embedder) onTimer() {
	st := &e.st
	st.timer = nil
	if st.paused {
		st.pendEnd = st.busy
		return
	}
	at := st.timerAt
	if st.busy {
		e.finishBatch()
	}
	e.schedule(at)
}

// schedule decides, at time now with no batch running, whether to start a
// batch (max_batch inputs queued, or the oldest has waited max_wait) or
// arm the max-wait timer.
func (e *Embedder) schedule(now time.Time) {
	st := &e.st
	if st.busy || st.paused {
		return
	}
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	head := e.headJob()
	if head == nil {
		return
	}
	deadline := head.arrived.Add(e.p.MaxWait)
	if e.st.pending >= e.p.MaxBatch || !deadline.After(now) {
		e.startBatch(now)
		return
	}
	e.arm(deadline)
}

func (e *Embedder) arm(at time.Time) {
	e.st.timerAt = at
	e.st.timer = e.clock.NewTimer(at.Sub(e.clock.Now()))
}

// headJob returns the oldest job with inputs still to batch.
func (e *Embedder) headJob() *embedJob {
	st := &e.st
	for st.head < len(st.queue) {
		if j := st.queue[st.head]; j.next < len(j.tokens) {
			return j
		}
		st.queue[st.head] = nil
		st.head++
	}
	st.queue, st.head = st.queue[:0], 0
	return nil
}

func (e *Embedder) startBatch(at time.Time) {
	st := &e.st
	st.batch = st.batch[:0]
	inputs, tokens := 0, 0
	for inputs < e.p.MaxBatch {
		j := e.headJob()
		if j == nil {
			break
		}
		n := min(len(j.tokens)-j.next, e.p.MaxBatch-inputs)
		for _, t := range j.tokens[j.next : j.next+n] {
			tokens += t
		}
		j.next += n
		inputs += n
		st.batch = append(st.batch, batchPart{job: j, n: n})
	}
	e.queued.Add(-int64(inputs))
	e.st.pending -= inputs
	e.running.Store(int64(inputs))
	d := float64(e.p.BatchTime(tokens)) * jitterFactor(e.p.Jitter, st.rng.Float64()) * st.slow
	st.busy = true
	e.arm(at.Add(time.Duration(d)))
	e.stats.batches.Add(1)
	e.stats.inputs.Add(int64(inputs))
	e.stats.tokens.Add(int64(tokens))
}

func (e *Embedder) finishBatch() {
	st := &e.st
	for _, part := range st.batch {
		j := part.job
		j.remaining -= part.n
		if j.remaining == 0 && j.err == nil {
			close(j.done)
		}
	}
	clear(st.batch)
	st.batch = st.batch[:0]
	st.busy = false
	e.running.Store(0)
}
