//go:build !linux

package load

import "time"

// waker is a no-op where there is no timerfd: close arrivals are waited
// for on the runtime timer alone.
type waker struct{ at time.Time }

func newWaker() *waker { return nil }

func (*waker) arm(time.Duration) error { return nil }

func (*waker) close() {}
