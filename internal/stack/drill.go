package stack

import (
	"context"
	"fmt"
	"syscall"

	"github.com/sagebench/sagebench/internal/stack/gateway"
)

// Faults a drill can inject into an engine, in-process or child process
// alike. Kill is final until Restart (process engines); Pause holds the
// engine (SIGSTOP for a child) until Resume; Slowdown scales an engine's
// speed (step times in-process, a SIGSTOP/SIGCONT duty cycle for a child).

// Kill makes engine id die: SIGKILL for a child process, Close for an
// in-process engine (it then fails requests with engine.ErrClosed). The
// gateway ejects it on the next failure or health probe.
func (s *Stack) Kill(id string) error {
	b, err := s.built(id)
	if err != nil {
		return err
	}
	if b.child != nil {
		b.child.stopCycle()
		return b.child.signal(syscall.SIGKILL)
	}
	if b.eng.Close == nil {
		return fmt.Errorf("engine %q is remote: kill it where it runs", id)
	}
	return b.eng.Close()
}

// Restart starts a killed (or running: it is killed first) process engine
// again on its address; the gateway re-admits it on a passing health probe.
func (s *Stack) Restart(ctx context.Context, id string) error {
	b, err := s.built(id)
	if err != nil {
		return err
	}
	if b.child == nil {
		return fmt.Errorf("engine %q does not run in its own process (set process: true): it cannot be restarted", id)
	}
	return b.child.restart(ctx)
}

// Pause stops engine id from making progress (SIGSTOP for a child).
func (s *Stack) Pause(id string) error { return s.signalOr(id, syscall.SIGSTOP, Drill.Pause) }

// Resume undoes Pause (SIGCONT for a child).
func (s *Stack) Resume(id string) error { return s.signalOr(id, syscall.SIGCONT, Drill.Resume) }

// Slowdown makes engine id factor times slower (1 = normal): an in-process
// engine's step times are multiplied; a child process runs 1/factor of
// each 100 ms (SIGCONT/SIGSTOP duty cycle).
func (s *Stack) Slowdown(id string, factor float64) error {
	if factor <= 0 {
		return fmt.Errorf("slowdown factor %v: must be > 0", factor)
	}
	b, err := s.built(id)
	if err != nil {
		return err
	}
	switch {
	case b.child != nil:
		b.child.slowdown(factor)
	case b.drill != nil:
		b.drill.SetSlowdown(factor)
	default:
		return fmt.Errorf("engine %q is remote: cannot slow it down", id)
	}
	return nil
}

func (s *Stack) signalOr(id string, sig syscall.Signal, fn func(Drill)) error {
	b, err := s.built(id)
	if err != nil {
		return err
	}
	switch {
	case b.child != nil:
		b.child.stopCycle()
		return b.child.signal(sig)
	case b.drill != nil:
		fn(b.drill)
		return nil
	}
	return fmt.Errorf("engine %q is remote: cannot %v it", id, sig)
}

func (s *Stack) built(id string) (*built, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.engines[id]
	switch {
	case !ok && id == GatewayID:
		return nil, fmt.Errorf("the gateway runs inside this process: it can be faulted only with topology: %s", TopologySplit)
	case !ok:
		return nil, fmt.Errorf("engine %q: %w", id, gateway.ErrUnknownEngine)
	}
	return b, nil
}

// DropResponses makes the gateway silently drop the next n API requests
// (/v1/…): the answer starts and the connection closes without finishing
// it, as a crashed proxy would. It exists to prove a drill's lost-request
// detector fires.
func (s *Stack) DropResponses(n int) { s.drop.Add(n) }

// Cut drops every established connection to the gateway (streams in
// flight are cut) and returns how many it dropped.
func (s *Stack) Cut() (int, error) { return s.conns.Cut(), nil }
