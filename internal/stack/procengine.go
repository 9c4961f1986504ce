package stack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procEngine is a process (an engine, or the split stack's gateway)
// across restarts: the child running now, how to start it again on the
// same address, and the slowdown cycler.
type procEngine struct {
	name  string                                                   // for errors
	start func(ctx context.Context, listen string) (*child, error) // starts it listening on listen

	mu    sync.Mutex
	cur   *child
	cycle chan struct{} // closed to stop the slowdown cycler; nil when none runs
	done  chan struct{} // closed when the cycler has stopped
}

// current returns the child running now.
func (p *procEngine) current() *child {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

func (p *procEngine) signal(sig syscall.Signal) error {
	return p.current().cmd.Process.Signal(sig)
}

// stop ends the cycler and stops the child (Close of the engine).
func (p *procEngine) stop() {
	p.stopCycle()
	p.current().stop()
}

// restart SIGKILLs the child if it still runs and starts a new one on the
// same address, so the gateway's client and health probe find it again.
func (p *procEngine) restart(ctx context.Context) error {
	p.stopCycle()
	old := p.current()
	_ = old.cmd.Process.Signal(syscall.SIGKILL)
	_ = old.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-old.exited:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s did not exit after SIGKILL", p.name)
	}
	addr := strings.TrimPrefix(old.url, "http://")
	ch, err := p.start(ctx, addr)
	if err != nil {
		return fmt.Errorf("restarting %s on %s: %w", p.name, addr, err)
	}
	p.mu.Lock()
	p.cur = ch
	p.mu.Unlock()
	return nil
}

// cyclePeriod is the period of the slowdown duty cycle of a process engine.
const cyclePeriod = 100 * time.Millisecond

// slowdown makes the child run 1/factor of the time: SIGCONT, run for
// period/factor, SIGSTOP for the rest of the period, repeated until
// factor ≤ 1 is set (which leaves it running).
func (p *procEngine) slowdown(factor float64) {
	p.stopCycle()
	if factor <= 1 {
		_ = p.signal(syscall.SIGCONT)
		return
	}
	run := time.Duration(float64(cyclePeriod) / factor)
	stop, done := make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	p.cycle, p.done = stop, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		defer func() { _ = p.signal(syscall.SIGCONT) }()
		for {
			_ = p.signal(syscall.SIGCONT)
			if !sleepOr(stop, run) {
				return
			}
			_ = p.signal(syscall.SIGSTOP)
			if !sleepOr(stop, cyclePeriod-run) {
				return
			}
		}
	}()
}

// stopCycle ends a running slowdown cycle (the child is left running).
func (p *procEngine) stopCycle() {
	p.mu.Lock()
	stop, done := p.cycle, p.done
	p.cycle, p.done = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// sleepOr sleeps d and reports true, or false as soon as stop is closed.
func sleepOr(stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}
