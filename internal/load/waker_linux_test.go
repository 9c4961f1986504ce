package load

import (
	"encoding/binary"
	"testing"
	"time"
)

// TestWakerFiresOnce: an armed waker's descriptor becomes readable once
// the timer expires (the poller sees it), and re-arming moves the one
// expiry rather than adding another.
func TestWakerFiresOnce(t *testing.T) {
	w := newWaker()
	if w == nil {
		t.Fatal("no timerfd on linux")
	}
	defer w.close()
	if err := w.arm(time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := w.arm(time.Millisecond); err != nil { // moves the hour to a millisecond
		t.Fatal(err)
	}
	if err := w.f.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err) // the descriptor is in the runtime poller, or deadlines would be unsupported
	}
	b := make([]byte, 8)
	if n, err := w.f.Read(b); err != nil || n != 8 || binary.NativeEndian.Uint64(b) != 1 {
		t.Fatalf("read %d bytes (%x), %v: want one expiry", n, b, err)
	}
}

func TestDriverWakerOnlyForTheEfficientRealPacer(t *testing.T) {
	tests := []struct {
		name  string
		d     Driver
		clk   Clock
		want  bool
		slack time.Duration
	}{
		{"default", Driver{}, PreciseClock{}, true, DefaultSlack},
		{"slack set", Driver{Slack: time.Millisecond}, PreciseClock{}, true, time.Millisecond},
		{"no kernel timer", Driver{Slack: -1}, PreciseClock{}, false, 0},
		{"precise pacer", Driver{FineGap: -1}, PreciseClock{}, false, 0},
		{"busy clock", Driver{}, PreciseClock{Busy: true}, false, 0},
		{"fake clock", Driver{}, newFakeClock(), false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, slack := tc.d.waker(tc.clk)
			if (w != nil) != tc.want || slack != tc.slack {
				t.Errorf("waker %v, slack %v; want %v, %v", w != nil, slack, tc.want, tc.slack)
			}
			if w != nil {
				w.close()
			}
		})
	}
}

// TestBackstopTracksTheAwaitedArrival: the kernel timer is kept within
// [t+slack-step, t+slack] of the arrival t being waited for — one arming
// serves the arrivals of a step — and moved to t+slack otherwise, so it
// fires only when that arrival is about a slack late.
func TestBackstopTracksTheAwaitedArrival(t *testing.T) {
	ms := time.Millisecond
	p := (&Driver{Slack: time.Second, step: 100 * ms}).newPacer(PreciseClock{})
	defer p.close()
	base := time.Now().Add(time.Hour)
	steps := []struct {
		name    string
		arrival time.Duration // after base
		want    time.Duration // expiry after base
	}{
		{"first arrival: armed a slack after it", 0, time.Second},
		{"within the step: kept", 50 * ms, time.Second},
		{"exactly a step: kept", 100 * ms, time.Second},
		{"past the step: moved", 150 * ms, 1150 * ms},
		{"an earlier arrival (a new schedule): moved back", 0, time.Second},
	}
	for _, s := range steps {
		p.backstop(base.Add(s.arrival))
		if got := p.wk.at.Sub(base); got != s.want {
			t.Fatalf("%s: arrival +%v: timer at +%v, want +%v", s.name, s.arrival, got, s.want)
		}
	}
}

// TestBackstopArmsPerStep counts the armings of a 5,000/s schedule: one
// per step (100 µs → every arrival 200 µs apart; 1 ms → one per six,
// both ends kept),
// and with issue 29's rule (step = slack) one per slack's span.
func TestBackstopArmsPerStep(t *testing.T) {
	us := time.Microsecond
	tests := []struct {
		name        string
		slack, step time.Duration
		want        int
	}{
		{"default step", 700 * us, 0, 1000},
		{"step of 1 ms: six arrivals share one", 2000 * us, 1000 * us, 167},
		{"issue 29's rule", 700 * us, 700 * us, 250},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := (&Driver{Slack: tc.slack, step: tc.step}).newPacer(PreciseClock{})
			defer p.close()
			base, arms, prev := time.Now().Add(time.Hour), 0, time.Time{}
			for i := range 1000 {
				p.backstop(base.Add(time.Duration(i) * 200 * us))
				if !p.wk.at.Equal(prev) {
					arms, prev = arms+1, p.wk.at
				}
			}
			if arms != tc.want {
				t.Errorf("%d armings for 1,000 arrivals 200 µs apart; want %d", arms, tc.want)
			}
		})
	}
}
