package stack

import (
	"fmt"
	"syscall"

	"github.com/sagebench/sagebench/internal/stack/gateway"
)

// Faults a drill can inject into an engine, in-process or child process
// alike. Kill is final; Pause holds the engine (SIGSTOP for a child) until
// Resume; Slowdown scales an in-process engine's step times.

// Kill makes engine id die: SIGKILL for a child process, Close for an
// in-process engine (it then fails requests with engine.ErrClosed). The
// gateway ejects it on the next failure or health probe.
func (s *Stack) Kill(id string) error {
	b, err := s.built(id)
	if err != nil {
		return err
	}
	if b.child != nil {
		return b.child.cmd.Process.Signal(syscall.SIGKILL)
	}
	if b.eng.Close == nil {
		return fmt.Errorf("engine %q is remote: kill it where it runs", id)
	}
	return b.eng.Close()
}

// Pause stops engine id from making progress (SIGSTOP for a child).
func (s *Stack) Pause(id string) error { return s.signalOr(id, syscall.SIGSTOP, Drill.Pause) }

// Resume undoes Pause (SIGCONT for a child).
func (s *Stack) Resume(id string) error { return s.signalOr(id, syscall.SIGCONT, Drill.Resume) }

// Slowdown multiplies an in-process engine's step times by factor (1 = normal).
func (s *Stack) Slowdown(id string, factor float64) error {
	d, err := s.Drill(id)
	if err != nil {
		return err
	}
	d.SetSlowdown(factor)
	return nil
}

func (s *Stack) signalOr(id string, sig syscall.Signal, fn func(Drill)) error {
	b, err := s.built(id)
	if err != nil {
		return err
	}
	switch {
	case b.child != nil:
		return b.child.cmd.Process.Signal(sig)
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
	if !ok {
		return nil, fmt.Errorf("engine %q: %w", id, gateway.ErrUnknownEngine)
	}
	return b, nil
}
