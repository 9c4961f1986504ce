package load

import (
	"context"
	"fmt"
	"time"
)

// Pacer names how a run's drivers wait for their arrivals (the run's
// pacer key and --pacer flag).
const (
	// PacerEfficient waits on the runtime timer, with a kernel-timer
	// backstop within DefaultSlack, for arrivals less than DefaultFineGap
	// after the previous one, and precisely for the rest: the default,
	// cheapest at thousands of arrivals a second.
	PacerEfficient = "efficient"
	// PacerPrecise waits precisely for every arrival: lower schedule lag
	// at high rates for more CPU per request (docs/load.md).
	PacerPrecise = "precise"
)

// FineGapOf returns the Driver.FineGap of pacer ("" is PacerEfficient),
// or an error naming the pacers there are.
func FineGapOf(pacer string) (time.Duration, error) {
	switch pacer {
	case "", PacerEfficient:
		return 0, nil
	case PacerPrecise:
		return -1, nil
	}
	return 0, fmt.Errorf("pacer %q: choose %s (default) or %s", pacer, PacerEfficient, PacerPrecise)
}

// pacer waits for one arrival after another on behalf of Driver.Run: an
// arrival at least FineGap after the previous one precisely
// (Clock.SleepUntil); a closer one on the runtime timer
// (ApproxSleeper.SleepApprox, or a timer reused across arrivals for the
// real clock), with a kernel timer armed within [t, t+Slack] as a
// backstop for when the process is otherwise idle.
type pacer struct {
	clk    Clock
	approx ApproxSleeper
	fine   time.Duration
	wk     *waker
	slack  time.Duration
	step   time.Duration // how far below t+slack the pending expiry may lag before it is moved
	timer  *time.Timer   // the real clock's approximate waits
}

func (d *Driver) newPacer(clk Clock) *pacer {
	p := &pacer{clk: clk, fine: d.fineGap()}
	p.approx, _ = clk.(ApproxSleeper)
	p.wk, p.slack = d.waker(clk)
	p.step = min(d.rearmStep(), p.slack)
	if pc, ok := clk.(PreciseClock); ok && !pc.Busy {
		p.timer = time.NewTimer(time.Hour)
		p.timer.Stop()
	}
	return p
}

// wait blocks until t or ctx is done; close says t follows the previous
// arrival by less than FineGap.
func (p *pacer) wait(ctx context.Context, t time.Time, close bool) error {
	switch {
	case !close || p.approx == nil:
		return p.clk.SleepUntil(ctx, t)
	case p.timer == nil:
		return p.approx.SleepApprox(ctx, t)
	}
	if p.wk != nil {
		p.backstop(t)
	}
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	p.timer.Reset(d) // Go 1.23+: no stale value survives Reset or Stop
	select {
	case <-ctx.Done():
		p.timer.Stop()
		return ctx.Err()
	case <-p.timer.C:
		return nil
	}
}

// backstop makes sure the kernel timer fires within
// [t+slack-step, t+slack] for the arrival t being waited for: it fires
// only when t is about slack late — the runtime slept through it — and
// never for an arrival the runtime served on time, since the pacer moves
// it on at the next arrival. The pending expiry is kept while it lies in
// that window (at most one timerfd_settime per step of schedule time,
// however close the arrivals) and moved to t+slack otherwise.
//
// Keeping an expiry anywhere in [t, t+slack] instead (issue 29's rule)
// let one arming cover a slack's span of arrivals, but then the timer
// fired as soon as the *last* arrival of that span was a little late
// (100 µs at 5,000/s and 700 µs of slack): the process woke for
// batches of one arrival where the runtime timer alone serves four or
// five, for a third more CPU per request (docs/load.md).
func (p *pacer) backstop(t time.Time) {
	latest := t.Add(p.slack)
	if !p.wk.at.After(latest) && !p.wk.at.Before(latest.Add(-p.step)) {
		return
	}
	if wait := time.Until(t); wait > 0 && p.wk.arm(wait+p.slack) == nil {
		p.wk.at = latest
	}
}

func (p *pacer) close() {
	if p.wk != nil {
		p.wk.close()
	}
	if p.timer != nil {
		p.timer.Stop()
	}
}

// waker returns the kernel timer that bounds close arrivals' lag to the
// slack, for the real clock (nil otherwise, or when Slack < 0).
func (d *Driver) waker(clk Clock) (*waker, time.Duration) {
	pc, ok := clk.(PreciseClock)
	if !ok || pc.Busy || d.Slack < 0 || d.fineGap() < 0 {
		return nil, 0
	}
	slack := d.Slack
	if slack == 0 {
		slack = DefaultSlack
	}
	return newWaker(), slack
}
