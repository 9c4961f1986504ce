package load

import (
	"context"
	"runtime"
	"time"
)

// Clock is the time source of a Driver. It is injected so that the
// driver's ordering, cancellation and drain logic can be tested without
// real sleeps.
//
// SleepUntil blocks until Now() >= t or ctx is done, and returns ctx.Err()
// in the latter case. After behaves as time.After.
type Clock interface {
	Now() time.Time
	SleepUntil(ctx context.Context, t time.Time) error
	After(d time.Duration) <-chan time.Time
}

// PreciseClock is the real clock. SleepUntil sleeps with the runtime timer
// until Spin before t (the runtime timer overshoots by about a millisecond),
// then in short OS-thread sleeps until just before t, then yields in a loop
// (runtime.Gosched) until t, so that the wake-up error is microseconds
// rather than the timer's granularity. Spin = 0 uses DefaultSpin.
type PreciseClock struct {
	Spin time.Duration
	// Busy makes the last Spin a pure busy wait (runtime.Gosched in a
	// loop). By default most of it is spent in short sleeps of the OS
	// thread (nanosleep, ~60 µs wake-up error, at most threadSleepChunk at
	// a time so that the goroutines sharing the thread's P are not held
	// up), which leaves the CPU to the target on a small machine.
	Busy bool
}

// threadSleepMargin is how early a thread sleep must end before an
// intended time; the rest is spun. It is 0: a thread sleep overshoots by
// ~60 µs, well inside the 1 ms the driver promises, while spinning the
// last 120 µs of every 200 µs gap cost a quarter of the run's CPU at
// 5,000 req/s (bench/load/compare.sh). Busy keeps the microsecond pacer.
// threadSleepChunk bounds one sleep.
const (
	threadSleepMargin = 0
	threadSleepChunk  = 250 * time.Microsecond
)

// DefaultSpin is how long before an intended time PreciseClock stops
// sleeping and starts spinning.
const DefaultSpin = 2 * time.Millisecond

// ApproxSleeper is a Clock that can also wait cheaply but less precisely.
// The driver uses it for arrivals that follow the previous one closely
// (Driver.FineGap).
type ApproxSleeper interface {
	// SleepApprox blocks until at least t (never earlier) or ctx is
	// done, and returns ctx.Err() in the latter case.
	SleepApprox(ctx context.Context, t time.Time) error
}

var _ ApproxSleeper = PreciseClock{}

// SleepApprox waits for t on a runtime timer alone (SleepUntil itself
// when Busy). The timer fires when the runtime next looks at its timers
// — microseconds late in a process busy with traffic, at worst the
// ~1 ms of the runtime's poll granularity when it is idle — and costs no
// wake-up of its own when the runtime is awake anyway, whereas each
// precise wake-up of an OS thread costs ~40 µs of CPU on a small VM
// (docs/load.md).
func (c PreciseClock) SleepApprox(ctx context.Context, t time.Time) error {
	if c.Busy {
		return c.SleepUntil(ctx, t)
	}
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

var _ Clock = PreciseClock{}

// Now returns time.Now().
func (PreciseClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (PreciseClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// SleepUntil waits until t (see PreciseClock).
func (c PreciseClock) SleepUntil(ctx context.Context, t time.Time) error {
	spin := c.Spin
	if spin <= 0 {
		spin = DefaultSpin
	}
	if d := time.Until(t) - spin; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	for {
		left := time.Until(t)
		if left <= 0 || ctx.Err() != nil {
			return ctx.Err()
		}
		// Yield first: the worker just handed an arrival was readied
		// onto this P and must not wait behind the thread sleep.
		runtime.Gosched()
		if left = time.Until(t); !c.Busy && left > threadSleepMargin {
			threadSleep(min(left-threadSleepMargin, threadSleepChunk))
		}
	}
}
