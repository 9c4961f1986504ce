package openai

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// The memory a response may take is bounded twice: per response by
// limitedBody (MaxResponseBytes), and across every call in flight by the
// client's budget (MaxBytesInFlight), which a call charges before a
// buffer of its grows (a body read whole, an SSE line buffer) and gives
// back when it ends.

// charge accounts n more bytes held by this call against the client's
// budget for all calls in flight; past it the call fails with
// errBudget (class too_large) instead of growing the process.
func (cl *call) charge(n int64) error {
	if cl.budget == nil || n <= 0 {
		return nil
	}
	if cl.budget.Add(n) > cl.limit {
		cl.budget.Add(-n)
		return fmt.Errorf("%w (%d MiB held by the requests in flight; target.max_bytes_in_flight)", errBudget, cl.limit>>20)
	}
	cl.held += n
	return nil
}

// release gives back what the call charged.
func (cl *call) release() {
	if cl.budget != nil && cl.held > 0 {
		cl.budget.Add(-cl.held)
		cl.held = 0
	}
}

// readAll reads the (size-limited) body, charging the buffer's growth to
// the budget before it grows. The bytes are the call's (valid until it
// is done): a recycled call reads into the buffer of a previous request.
func (cl *call) readAll() ([]byte, error) {
	b := cl.buf[:0]
	if cap(b) < 512 {
		b = make([]byte, 0, 512)
	}
	if err := cl.charge(int64(cap(b))); err != nil {
		return nil, err
	}
	for {
		if len(b) == cap(b) {
			if err := cl.charge(int64(cap(b))); err != nil {
				return b, err
			}
			b = slices.Grow(b, cap(b))
		}
		n, err := cl.body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		cl.buf = b
		if errors.Is(err, io.EOF) {
			cl.eof = true
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// limitedBody fails with errTooLarge once more than n bytes were read.
type limitedBody struct {
	r io.Reader
	n int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errTooLarge
	}
	return n, err
}
