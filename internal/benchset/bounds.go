package benchset

import (
	"errors"
	"fmt"
	"io"
)

// Bounds of one input file of compare and gate (Go benchmark text,
// pytest-benchmark JSON, unified_results.jsonl, a run directory's
// bench.txt): past either, the input is refused as a whole with a
// *TooLargeError (exit 2), before it is held in memory. A 120 MB pytest
// JSON took 12.5 GB to read; these keep a gate to a few hundred MB.
const (
	MaxInputBytes = 32 << 20 // bytes of one input file
	MaxSamples    = 500_000  // results of one input (a pytest round or a benchmark line each; ~600 bytes held each)
)

// TooLargeError is an input over MaxInputBytes or MaxSamples.
type TooLargeError struct {
	File  string
	What  string // "bytes" or "samples"
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: more than %d %s, the most compare and gate read of one input (see docs/ci.md); split it or keep fewer samples", e.File, e.Limit, e.What)
}

// IsTooLarge reports whether err is (or wraps) a *TooLargeError.
func IsTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// readBounded reads r whole, failing with a *TooLargeError past
// MaxInputBytes (having read one byte more, never the rest).
func readBounded(r io.Reader, file string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{File: file, What: "bytes", Limit: limit}
	}
	return data, nil
}

// boundedReader fails with a *TooLargeError once more than limit bytes
// were read from r.
type boundedReader struct {
	r     io.Reader
	file  string
	limit int64
	n     int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n > b.limit {
		return 0, &TooLargeError{File: b.file, What: "bytes", Limit: b.limit}
	}
	if rest := b.limit + 1 - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return 0, &TooLargeError{File: b.file, What: "bytes", Limit: b.limit}
	}
	return n, err
}
