package dataflow

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// Call runs one delivery of in through op at stage s, as a worker of a
// distributed engine does: an error, a panic or (when s.Timeout > 0) an
// overrun becomes a *StageError; nil means success. A call that outlives
// its timeout is abandoned (its context is cancelled) and abandoned reports
// it. emit is wrapped so that a call after Call has returned — a late or
// abandoned emit — fails with ErrEmitClosed instead of reaching emit; the
// wrapper serialises emits, so emit itself need not be safe for concurrent
// use.
func Call(ctx context.Context, s StageConfig, op Operator, in Record, emit func(Record) error) (se *StageError, abandoned bool) {
	g := &guard{emit: emit}
	defer g.close()
	fail := func(kind ErrorKind, msg string) *StageError {
		return &StageError{Stage: s.Name, Operator: s.Operator, Kind: kind, Message: msg}
	}
	if s.Timeout <= 0 {
		return protect(ctx, op, in, g.call, fail), false
	}
	cctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	done := make(chan *StageError, 1)
	go func() { done <- protect(cctx, op, in, g.call, fail) }()
	select {
	case se = <-done:
	case <-cctx.Done():
		select {
		case se = <-done:
		default:
			abandoned = true
		}
	}
	timedOut := ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded)
	if timedOut && (abandoned || se != nil) {
		se = fail(KindTimeout, fmt.Sprintf("no result within the stage timeout of %s", s.Timeout))
	}
	return se, abandoned && timedOut
}

func protect(ctx context.Context, op Operator, in Record, emit func(Record) error, fail func(ErrorKind, string) *StageError) (se *StageError) {
	defer func() {
		if v := recover(); v != nil {
			se = fail(KindPanic, fmt.Sprintf("%v\n%s", v, stackHead(debug.Stack(), 4096)))
		}
	}()
	if err := op.Process(ctx, in, emit); err != nil {
		return fail(KindError, err.Error())
	}
	return nil
}

// guard forwards emits until it is closed.
type guard struct {
	mu     sync.Mutex
	closed bool
	emit   func(Record) error
}

func (g *guard) call(r Record) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrEmitClosed
	}
	return g.emit(r)
}

func (g *guard) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
