package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds every document must keep before the decoder sees it. Our schemas
// nest a handful of levels and fit in kilobytes; the caps stop a hostile
// or mistaken file (a 100k-deep `[[[[…`, /dev/zero) from eating the
// machine: goccy/go-yaml needs gigabytes and minutes for such input.
const (
	MaxBytes = 4 << 20 // longest document accepted
	MaxDepth = 64      // deepest nesting of collections accepted
)

// ErrTooLarge and ErrTooDeep are the errors of a document over a bound.
var (
	ErrTooLarge = errors.New("YAML document too large")
	ErrTooDeep  = errors.New("YAML document nested too deep")
	ErrBinary   = errors.New("not a YAML text (it holds NUL bytes)")
)

// ReadFile reads a configuration file of at most MaxBytes: a longer file
// (or an endless one such as /dev/zero) is ErrTooLarge after reading
// MaxBytes+1 bytes, never more.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%s: %w (more than %d bytes); is it the right file?", path, ErrTooLarge, MaxBytes)
	}
	return b, nil
}

// Check reports a document over MaxBytes or MaxDepth, or holding NUL
// bytes. It reads data once and allocates O(depth), so it is safe to run
// on anything; Unmarshal runs it first. Call it yourself before handing
// bytes to another goccy/go-yaml entry point (parser.ParseBytes).
func Check(data []byte) error {
	if len(data) > MaxBytes {
		return fmt.Errorf("%w (%d bytes, at most %d)", ErrTooLarge, len(data), MaxBytes)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("%w at byte %d", ErrBinary, i)
	}
	depth, line := maxNesting(data, MaxDepth)
	if depth > MaxDepth {
		return fmt.Errorf("%w: more than %d levels at line %d", ErrTooDeep, MaxDepth, line)
	}
	return nil
}
