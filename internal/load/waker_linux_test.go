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

// TestBackstopArmsOncePerSlack: arrivals closer together than the slack
// share one kernel timer; it moves only when it would fire before the
// arrival or later than the slack after it.
func TestBackstopArmsOncePerSlack(t *testing.T) {
	p := (&Driver{Slack: time.Second}).newPacer(PreciseClock{})
	defer p.close()
	base := time.Now().Add(time.Hour)
	steps := []struct {
		arrival time.Duration // after base
		want    time.Duration // expiry after base
	}{
		{0, time.Second},
		{200 * time.Millisecond, time.Second},              // within [t, t+slack]: kept
		{time.Second, time.Second},                         // exactly at t: kept
		{1200 * time.Millisecond, 2200 * time.Millisecond}, // would fire before t: moved
	}
	for _, s := range steps {
		p.backstop(base.Add(s.arrival))
		if got := p.wk.at.Sub(base); got != s.want {
			t.Fatalf("arrival +%v: timer at +%v, want +%v", s.arrival, got, s.want)
		}
	}
}
