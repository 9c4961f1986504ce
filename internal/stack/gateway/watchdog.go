package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errStalled marks an engine that produced nothing for StallTimeout.
const errStalled = gatewayError("engine stalled")

// watchdog cancels a stream's context when its engine goes quiet for too
// long (a hung or SIGSTOPped engine), so the request is retried or ends
// with an explicit error instead of hanging. One timer per stream; a token
// only stamps the time (no timer reset per token), and the timer, when it
// fires, re-arms itself from the last progress. Quiet means the engine as a whole made no progress: a
// request waiting inside an engine that keeps serving others (its batch or
// KV cache is full) is queued, not stalled.
type watchdog struct {
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex // guards t while it is being created
	t       *time.Timer
	d       time.Duration
	m       *entry       // whose progress counts; nil: only this stream's
	last    atomic.Int64 // unix ns of this stream's last progress (or its start)
	fired   atomic.Bool
	stopped atomic.Bool
}

func newWatchdog(parent context.Context, d time.Duration, m *entry) *watchdog {
	ctx, cancel := context.WithCancel(parent)
	w := &watchdog{ctx: ctx, cancel: cancel, d: d, m: m}
	w.last.Store(time.Now().UnixNano())
	w.mu.Lock()
	w.t = time.AfterFunc(d, w.expire)
	w.mu.Unlock()
	return w
}

func (w *watchdog) expire() {
	if w.stopped.Load() {
		return
	}
	last := w.last.Load()
	if w.m != nil {
		last = max(last, w.m.progress.Load())
	}
	if quiet := time.Since(time.Unix(0, last)); quiet < w.d {
		w.mu.Lock()
		w.t.Reset(w.d - quiet)
		w.mu.Unlock()
		return
	}
	w.fired.Store(true)
	w.cancel()
}

// kick restarts the quiet period after progress.
func (w *watchdog) kick() {
	now := time.Now().UnixNano()
	w.last.Store(now)
	if w.m != nil {
		w.m.progress.Store(now)
	}
}

func (w *watchdog) stop() {
	w.stopped.Store(true)
	w.t.Stop()
	w.cancel()
}

// explain turns the cancellation the watchdog caused into errStalled.
func (w *watchdog) explain(err error) error {
	if err != nil && w.fired.Load() {
		return fmt.Errorf("%w: nothing for %v (limits.stall_timeout)", errStalled, w.d)
	}
	return err
}
