package gateway

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// errStalled marks an engine that produced nothing for StallTimeout.
const errStalled = gatewayError("engine stalled")

// watchdog cancels a stream's context when its engine goes quiet for too
// long (a hung or SIGSTOPped engine), so the request is retried or ends
// with an explicit error instead of hanging. One timer per stream, reset
// on every token.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelFunc
	t      *time.Timer
	d      time.Duration
	fired  atomic.Bool
}

func newWatchdog(parent context.Context, d time.Duration) *watchdog {
	ctx, cancel := context.WithCancel(parent)
	w := &watchdog{ctx: ctx, cancel: cancel, d: d}
	w.t = time.AfterFunc(d, func() {
		w.fired.Store(true)
		cancel()
	})
	return w
}

// kick restarts the quiet period after progress.
func (w *watchdog) kick() { w.t.Reset(w.d) }

func (w *watchdog) stop() {
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
