package sim

import (
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(t0)
	late := c.NewTimer(30 * time.Millisecond)
	early := c.NewTimer(10 * time.Millisecond)
	stopped := c.NewTimer(20 * time.Millisecond)
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop should report true once, then false")
	}
	if next, ok := c.Next(); !ok || !next.Equal(t0.Add(10*time.Millisecond)) {
		t.Errorf("Next() = %v, %v", next, ok)
	}
	c.Advance(15 * time.Millisecond)
	select {
	case at := <-early.C():
		if !at.Equal(t0.Add(10 * time.Millisecond)) {
			t.Errorf("early timer delivered %v, want its deadline", at)
		}
	default:
		t.Fatal("due timer did not fire")
	}
	select {
	case <-late.C():
		t.Fatal("timer fired before its deadline")
	case <-stopped.C():
		t.Fatal("stopped timer fired")
	default:
	}
	if early.Stop() {
		t.Error("Stop of a fired timer should report false")
	}
	c.Advance(15 * time.Millisecond)
	if _, ok := c.Next(); ok {
		t.Error("no timer should be pending")
	}
	select {
	case <-late.C():
	default:
		t.Fatal("late timer did not fire at its deadline")
	}
	now := c.NewTimer(0)
	select {
	case <-now.C():
	default:
		t.Fatal("a timer with no delay fires at once")
	}
}
