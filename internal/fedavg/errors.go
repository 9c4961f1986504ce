package fedavg

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package matches exactly one
// of them with errors.Is; most are wrapped in an *InputError that names the
// offending client and coordinate.
var (
	// ErrEmpty: no updates, or updates of dimension zero.
	ErrEmpty = errors.New("fedavg: empty input")
	// ErrLength: an update (or dst) whose length differs from the first
	// update, or a weights slice whose length differs from len(updates).
	ErrLength = errors.New("fedavg: length mismatch")
	// ErrNonFinite: an update holds NaN or ±Inf.
	ErrNonFinite = errors.New("fedavg: non-finite value in update")
	// ErrWeight: a weight that is zero, negative, NaN or ±Inf, or weights
	// whose sum is not finite.
	ErrWeight = errors.New("fedavg: invalid weight")
	// ErrParam: an aggregator parameter out of range (f too large for
	// Multi-Krum, a trim that removes every value, a negative clip norm).
	ErrParam = errors.New("fedavg: invalid parameter")
)

// InputError locates a bad input. Client and Index are -1 when they do not
// apply. It unwraps to one of the sentinel errors.
type InputError struct {
	Err    error // one of the sentinels above
	Client int   // index into updates/weights, or -1
	Index  int   // coordinate, or -1
	Detail string
}

func (e *InputError) Error() string {
	msg := e.Err.Error()
	if e.Client >= 0 {
		msg += fmt.Sprintf(" (client %d", e.Client)
		if e.Index >= 0 {
			msg += fmt.Sprintf(", coordinate %d", e.Index)
		}
		msg += ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *InputError) Unwrap() error { return e.Err }

func inputErr(err error, client, index int, format string, args ...any) error {
	return &InputError{Err: err, Client: client, Index: index, Detail: fmt.Sprintf(format, args...)}
}
