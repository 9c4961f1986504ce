package load

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock jumps to each intended time at once instead of sleeping.
// After(d) fires immediately when d == fireAfter, else never.
type fakeClock struct {
	mu        sync.Mutex
	now       time.Time
	fireAfter time.Duration
}

var _ Clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	if t.After(f.now) {
		f.now = t
	}
	f.mu.Unlock()
	return nil
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	if d == f.fireAfter {
		c <- f.Now().Add(d)
	}
	return c
}

func TestRunDispatchesEveryArrivalAtItsTime(t *testing.T) {
	for _, spawn := range []bool{false, true} {
		clk := newFakeClock()
		s := Schedule{Offsets: []time.Duration{0, 5, 5, 10, 1000, 2000}, Length: 3000}
		got := make([]time.Time, s.Len())
		var calls atomic.Int64
		d := &Driver{Clock: clk, Spawn: spawn, Workers: 2}
		rep := d.Run(context.Background(), s, func(_ context.Context, i int, intended time.Time) {
			got[i] = intended
			calls.Add(1)
		})
		start := rep.Start
		for i, off := range s.Offsets {
			if !got[i].Equal(start.Add(off)) {
				t.Errorf("spawn=%v: arrival %d intended %v, want start+%v", spawn, i, got[i].Sub(start), off)
			}
		}
		if calls.Load() != 6 || rep.Dispatched != 6 || rep.Completed != 6 || rep.Scheduled != 6 || rep.Interrupted || rep.Mode != ModeOpen {
			t.Errorf("spawn=%v: report %+v", spawn, rep)
		}
		if rep.DispatchLag.Count != 6 || rep.DispatchLag.P50 < 0 {
			t.Errorf("spawn=%v: lag %+v", spawn, rep.DispatchLag)
		}
	}
}

// A hit that blocks must not delay later arrivals: hit 0 waits until the
// last arrival has been dispatched.
func TestRunSlowHitDoesNotDelayOthers(t *testing.T) {
	s := Schedule{Offsets: make([]time.Duration, 100)}
	for i := range s.Offsets {
		s.Offsets[i] = time.Duration(i) * time.Millisecond
	}
	last := make(chan struct{})
	d := &Driver{Clock: newFakeClock(), Workers: 1}
	rep := d.Run(context.Background(), s, func(_ context.Context, i int, _ time.Time) {
		switch i {
		case 0:
			<-last
		case 99:
			close(last)
		}
	})
	if rep.Completed != 100 || rep.Dispatched != 100 {
		t.Fatalf("report %+v", rep)
	}
}

func TestRunMaxInFlight(t *testing.T) {
	s := Schedule{Offsets: make([]time.Duration, 50)}
	var active, peak atomic.Int64
	d := &Driver{Clock: newFakeClock(), MaxInFlight: 3}
	rep := d.Run(context.Background(), s, func(context.Context, int, time.Time) {
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(time.Millisecond)
		active.Add(-1)
	})
	if rep.Completed != 50 || peak.Load() > 3 || rep.PeakWorkers > 3 {
		t.Fatalf("completed %d, peak %d / %d", rep.Completed, peak.Load(), rep.PeakWorkers)
	}
}

// Cancelling stops dispatching; hits still running get their ctx
// cancelled after the drain, and the report says interrupted.
func TestRunCancelAndDrain(t *testing.T) {
	clk := newFakeClock()
	clk.fireAfter = 2 * time.Second // the drain ends at once, the grace never
	s := Schedule{Offsets: make([]time.Duration, 1000)}
	for i := range s.Offsets {
		s.Offsets[i] = time.Duration(i) * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sawCancel atomic.Int64
	d := &Driver{Clock: clk, Drain: 2 * time.Second}
	rep := d.Run(ctx, s, func(hctx context.Context, i int, _ time.Time) {
		if i == 9 {
			cancel()
		}
		<-hctx.Done()
		sawCancel.Add(1)
	})
	if !rep.Interrupted || rep.Dispatched < 10 || rep.Dispatched >= 1000 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Completed != rep.Dispatched || int(sawCancel.Load()) != rep.Dispatched || rep.Abandoned != 0 {
		t.Errorf("dispatched %d completed %d cancelled %d abandoned %d", rep.Dispatched, rep.Completed, sawCancel.Load(), rep.Abandoned)
	}
	undispatched := 0
	for _, l := range rep.Lags {
		if l == NotDispatched {
			undispatched++
		}
	}
	if undispatched != 1000-rep.Dispatched {
		t.Errorf("%d lags marked not dispatched, want %d", undispatched, 1000-rep.Dispatched)
	}
}

// Hits that finish within the drain are not cancelled.
func TestRunDrainLetsHitsFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := Schedule{Offsets: []time.Duration{0}}
	var cancelled atomic.Bool
	d := &Driver{Clock: newFakeClock()} // After never fires: an endless drain
	rep := d.Run(ctx, s, func(hctx context.Context, i int, _ time.Time) {
		cancel()
		time.Sleep(10 * time.Millisecond)
		cancelled.Store(hctx.Err() != nil)
	})
	if !rep.Interrupted || rep.Completed != 1 || cancelled.Load() {
		t.Fatalf("report %+v, hit saw cancel %v", rep, cancelled.Load())
	}
}

func TestRunClosed(t *testing.T) {
	var active, peak atomic.Int64
	seen := make([]atomic.Int64, 30)
	d := &Driver{Clock: newFakeClock()}
	rep := d.RunClosed(context.Background(), 3, 30, func(_ context.Context, i int, _ time.Time) {
		seen[i].Add(1)
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(100 * time.Microsecond)
		active.Add(-1)
	})
	if rep.Mode != ModeClosed || rep.Completed != 30 || rep.Dispatched != 30 || rep.Interrupted || peak.Load() > 3 {
		t.Fatalf("report %+v peak %d", rep, peak.Load())
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Errorf("request %d ran %d times", i, seen[i].Load())
		}
	}
}

func TestRunProgress(t *testing.T) {
	var last Progress
	var n int
	d := &Driver{Clock: newFakeClock(), Progress: func(p Progress) { last = p; n++ }}
	d.Run(context.Background(), Schedule{Offsets: make([]time.Duration, 7)}, func(context.Context, int, time.Time) {})
	if n == 0 || last.Dispatched != 7 || last.Completed != 7 || last.InFlight != 0 || last.Scheduled != 7 {
		t.Fatalf("progress %+v after %d calls", last, n)
	}
}

func TestSummarize(t *testing.T) {
	lags := []time.Duration{NotDispatched}
	for i := 1; i <= 1000; i++ {
		lags = append(lags, time.Duration(i)*time.Microsecond)
	}
	s := Summarize(lags)
	if s.Count != 1000 || s.P50 != 500*time.Microsecond || s.P99 != 990*time.Microsecond || s.Max != time.Millisecond {
		t.Fatalf("summary %+v", s)
	}
	if (Summarize(nil) != LagSummary{}) {
		t.Fatal("empty summary not zero")
	}
}

func TestPreciseClockCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (PreciseClock{}).SleepUntil(ctx, time.Now().Add(time.Hour)); err == nil {
		t.Fatal("SleepUntil ignored a cancelled context")
	}
	for _, c := range []PreciseClock{{}, {Busy: true}} {
		target := time.Now().Add(3 * time.Millisecond)
		if err := c.SleepUntil(context.Background(), target); err != nil || time.Now().Before(target) {
			t.Fatalf("%+v: SleepUntil returned early or with %v", c, err)
		}
	}
}

// approxClock is a fakeClock that records which wait each arrival got.
type approxClock struct {
	*fakeClock
	mu     sync.Mutex
	approx []time.Time // intended times waited for with SleepApprox
}

func (a *approxClock) SleepApprox(ctx context.Context, t time.Time) error {
	a.mu.Lock()
	a.approx = append(a.approx, t)
	a.mu.Unlock()
	return a.fakeClock.SleepUntil(ctx, t)
}

// TestFineGapChoosesTheWait: arrivals closer than FineGap to the previous
// one are waited for with SleepApprox, the first and the others with
// SleepUntil; FineGap < 0 never approximates.
func TestFineGapChoosesTheWait(t *testing.T) {
	ms := time.Millisecond
	s := Schedule{Offsets: []time.Duration{0, ms / 5, 2 * ms / 5, 3 * ms, 3*ms + 999*time.Microsecond, 10 * ms}, Length: 20 * ms}
	tests := []struct {
		name    string
		fineGap time.Duration
		want    []int // arrivals waited for approximately
	}{
		{"default 1 ms", 0, []int{1, 2, 4}},
		{"5 ms", 5 * ms, []int{1, 2, 3, 4}},
		{"never", -1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &approxClock{fakeClock: newFakeClock()}
			d := &Driver{Clock: clk, FineGap: tc.fineGap, Workers: 1}
			rep := d.Run(context.Background(), s, func(context.Context, int, time.Time) {})
			var got []int
			for _, at := range clk.approx {
				for i, off := range s.Offsets {
					if rep.Start.Add(off).Equal(at) {
						got = append(got, i)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("approximate waits for arrivals %v, want %v", got, tc.want)
			}
			if rep.Completed != s.Len() {
				t.Errorf("completed %d of %d", rep.Completed, s.Len())
			}
		})
	}
}

// TestSleepApproxNeverEarly: the runtime-timer wait returns at or after
// its time, and at once for a time already past or a cancelled context.
func TestSleepApproxNeverEarly(t *testing.T) {
	c := PreciseClock{}
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 2 * time.Millisecond} {
		at := time.Now().Add(d)
		if err := c.SleepApprox(context.Background(), at); err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); now.Before(at) {
			t.Errorf("SleepApprox(%v) returned %v early", d, at.Sub(now))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.SleepApprox(ctx, time.Now().Add(time.Hour)); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}
