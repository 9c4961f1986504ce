package dataflow

import (
	"context"
	"errors"
)

// Engine runs a Graph. The in-process Local engine implements it; a NATS
// JetStream engine implements the same contract across processes (see the
// package documentation for how each method maps).
//
// Life cycle: Deploy once; run Serve (it blocks) while another goroutine
// calls Submit for each input record and a third reads Results; call
// CloseInput after the last Submit. Serve returns nil once every accepted
// record has been delivered to Results, and Results is closed after that.
// Cancelling Serve's context stops the run early: records still in the
// graph are dropped, Serve returns the context's error and Results closes.
type Engine interface {
	// Deploy validates g against the engine's registry and prepares its
	// queues and operators. It fails with *UnknownOperatorError for an
	// operator name the registry lacks.
	Deploy(ctx context.Context, g Graph) error
	// Serve runs the workers of the deployed graph until the input is
	// closed and drained, or ctx is done.
	Serve(ctx context.Context) error
	// Submit offers r to the first stage, blocking while its queue is full
	// (backpressure) until ctx is done. It returns ErrClosed after
	// CloseInput or once the run has stopped. r.ID must be non-empty and
	// unique within the run: results are deduplicated by it.
	Submit(ctx context.Context, r Record) error
	// Results delivers each record the last stage emits, and each error
	// record, exactly once per ID (later duplicates are dropped). Reading
	// it slowly applies backpressure to the whole graph.
	Results() <-chan Record
	// CloseInput declares that no more records will be submitted.
	CloseInput()
}

// Errors returned by engines.
var (
	ErrClosed      = errors.New("runtime: input closed or run stopped")
	ErrNotDeployed = errors.New("runtime: no graph deployed")
	ErrDeployed    = errors.New("runtime: a graph is already deployed")
	ErrEmptyID     = errors.New("runtime: record ID is empty")
	ErrEmitClosed  = errors.New("runtime: emit called after Process returned or timed out")
)

// Event is what an Observer sees each time a stage finishes one delivery
// of one input record: its timing at the stage and, on failure, the error.
// Outputs carries how many records the call emitted.
type Event struct {
	Stage    string
	ID       string
	Trace    string
	Delivery int
	Hop      Hop // Ended is when Process returned (or timed out)
	Outputs  int
	Err      *StageError
}

// Observer receives an Event per processed input record per stage. It is
// called from worker goroutines, concurrently, on the hot path: it must be
// safe for concurrent use and cheap (record, don't block).
type Observer func(Event)
