package drill

import (
	"context"
	"time"
)

// Outcomes of an event.
const (
	OutcomeOK           = "ok"
	OutcomeError        = "error"         // attempted and failed
	OutcomeNotPerformed = "not_performed" // no actor could perform it, or the run ended first
	OutcomeTimedOut     = "timed_out"     // a hook ran past its timeout and was stopped
)

// Result is one performed (or not performed) event: a line of
// events.jsonl. Offsets are ns since the run's start.
type Result struct {
	Seq        int    `json:"seq"`
	Action     string `json:"action"`
	Target     string `json:"target"`
	Detail     string `json:"detail,omitempty"`
	IntendedNS int64  `json:"intended_ns"`
	ActualNS   int64  `json:"actual_ns"` // when the action started (0: never)
	DoneNS     int64  `json:"done_ns"`   // when it returned
	Via        string `json:"via,omitempty"`
	Outcome    string `json:"outcome"`
	Error      string `json:"error,omitempty"`
	ExitStatus *int   `json:"exit_status,omitempty"`
	HTTPStatus int    `json:"http_status,omitempty"`
	Output     string `json:"output,omitempty"`
	// UndoOf is the seq of the fault this event undoes (the resume of a
	// timed pause, the factor-1 end of a timed slowdown).
	UndoOf *int `json:"undo_of,omitempty"`
	// EndNS is when a fault with a duration ended: its undo's actual time
	// (absent for an instantaneous fault, or when the undo did not happen).
	EndNS int64 `json:"end_ns,omitempty"`
}

// Timeline runs expanded events against an actor.
type Timeline struct {
	Events []Event
	Actor  Actor
	// Offset turns a time into ns since the run's start (workload.Env.Offset).
	Offset func(time.Time) int64
}

// Run performs each event at start+At, one after the other, and returns
// their results. Events still pending when ctx ends are not performed.
func (tl Timeline) Run(ctx context.Context, start time.Time) []Result {
	out := make([]Result, 0, len(tl.Events))
	for i, e := range tl.Events {
		intended := start.Add(e.At)
		r := Result{Seq: i, Action: e.Action, Target: e.Target(), Detail: e.Detail(), IntendedNS: tl.Offset(intended)}
		if k, ok := e.UndoOf(); ok {
			r.UndoOf = &k
		}
		if !sleepUntil(ctx, intended) {
			r.Outcome, r.Error = OutcomeNotPerformed, "the run ended before the event's time"
			out = append(out, r)
			continue
		}
		r.ActualNS = tl.Offset(time.Now())
		d := tl.Actor.Do(ctx, e)
		r.DoneNS = tl.Offset(time.Now())
		r.Via, r.ExitStatus, r.HTTPStatus, r.Output = d.Via, d.ExitStatus, d.HTTPStatus, d.Output
		switch {
		case d.Unsupported:
			r.Outcome, r.ActualNS, r.DoneNS = OutcomeNotPerformed, 0, 0
		case d.TimedOut:
			r.Outcome = OutcomeTimedOut
		case d.Err != nil:
			r.Outcome = OutcomeError
		default:
			r.Outcome = OutcomeOK
		}
		if d.Err != nil {
			r.Error = d.Err.Error()
		}
		out = append(out, r)
	}
	for _, r := range out {
		if r.UndoOf != nil && r.Outcome == OutcomeOK && *r.UndoOf < len(out) {
			out[*r.UndoOf].EndNS = r.ActualNS
		}
	}
	return out
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
