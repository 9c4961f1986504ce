package dataflow

import (
	"fmt"
	"time"
)

// Record is the unit of work that flows through a graph.
//
// ID is stable across redeliveries and is the sink's dedup key: an operator
// that maps one input to one output keeps the input's ID; one that fans out
// gives each output a deterministic ID (for example in.ID+"/"+strconv.Itoa(i))
// so that a redelivered input produces the same IDs again. An emitted record
// with an empty ID gets "<input ID>.<n>" (n counting the call's emits from 0).
//
// Payload is opaque bytes: the engine never looks inside, and it is what
// crosses a process boundary, so operators encode their own values (JSON is
// fine). In serialising mode the in-process engine copies every record
// through the wire format at each stage boundary, so an operator that keeps
// or mutates a slice it handed downstream is caught on one machine.
type Record struct {
	ID       string
	Payload  []byte
	Meta     Metadata
	Hops     []Hop       // one per stage visited, appended by the engine
	Err      *StageError // non-nil on an error record
	Delivery int         // 1 on first delivery to the current stage, 2+ on redelivery
}

// Metadata travels with a record unchanged unless an operator changes it.
// The engine does not act on Intended or Deadline: they are there for the
// workload (lateness is measured, not enforced) and for operators that pass
// a deadline on, e.g. as X-SLO-Deadline-Ms. An emitted record whose Meta is
// the zero value inherits its input's Meta.
type Metadata struct {
	Trace    string    // trace/transaction ID, shared by every record of one transaction
	Tenant   string    // tenant the work belongs to
	Intended time.Time // when the load schedule intended the transaction to start
	Deadline time.Time // end-to-end deadline of the transaction; zero means none
}

// Hop is the timing of one record at one stage, taken from the engine's
// clock. Enqueued is when the record was offered to the stage's queue (so
// Started-Enqueued includes time spent blocked on backpressure), Started
// when a worker began Process on it, Ended when the operator emitted this
// record (for an output record) or when Process failed (for an error record).
type Hop struct {
	Stage    string
	Enqueued time.Time
	Started  time.Time
	Ended    time.Time
}

// Queue is the time the record waited at the stage before service.
func (h Hop) Queue() time.Duration { return h.Started.Sub(h.Enqueued) }

// Service is the time from service start to emit (or failure).
func (h Hop) Service() time.Duration { return h.Ended.Sub(h.Started) }

// ErrorKind classifies how a stage failed a record.
type ErrorKind string

// Error kinds of a StageError.
const (
	KindError   ErrorKind = "error"   // Process returned an error
	KindPanic   ErrorKind = "panic"   // Process panicked
	KindTimeout ErrorKind = "timeout" // Process outlived the stage timeout
	// KindDeadLetter: a distributed engine gave up on the record after its
	// maximum number of deliveries (a poison record that kept killing or
	// stalling its workers) or could not decode it, and moved it to the
	// dead-letter subject.
	KindDeadLetter ErrorKind = "dead_letter"
)

// StageError says which stage failed a record and how. It is carried by the
// error record that replaces the failed record's output.
type StageError struct {
	Stage    string
	Operator string
	Kind     ErrorKind
	Message  string
}

func (e *StageError) Error() string {
	return fmt.Sprintf("stage %q (operator %q): %s: %s", e.Stage, e.Operator, e.Kind, e.Message)
}
