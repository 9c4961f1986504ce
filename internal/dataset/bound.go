package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxValueBytes bounds one value of a dataset or trace file: a line of a
// JSONL file (prompts, Mooncake), one ShareGPT conversation, one CSV
// record. A file holding a longer one is refused as soon as that much of
// it is read, naming the file and the line it starts on: one value is
// never held whole past the bound (a 1 GiB ShareGPT line took 3.2 GB and
// died out of memory before).
const MaxValueBytes = maxLine

// errValueTooLong is the error of a value over MaxValueBytes.
var errValueTooLong = fmt.Errorf("longer than %d bytes, the bound of one value (a line, a conversation, a record); is it the right file?", MaxValueBytes)

// boundChunk is the most a valueBound hands its reader at once: it is
// how far past the bound a value is read before it is refused.
const boundChunk = 64 << 10

// valueBound reads on until the value that starts at mark is over limit
// bytes, then fails with errValueTooLong. Its reader (a JSON or CSV
// decoder) sets mark to the offset of each value it starts.
type valueBound struct {
	r     io.Reader
	off   int64
	mark  int64
	limit int64
}

func newValueBound(r io.Reader) *valueBound {
	return &valueBound{r: r, limit: MaxValueBytes}
}

func (v *valueBound) Read(p []byte) (int, error) {
	if v.off-v.mark > v.limit {
		return 0, errValueTooLong
	}
	if len(p) > boundChunk {
		p = p[:boundChunk]
	}
	n, err := v.r.Read(p)
	v.off += int64(n)
	return n, err
}

// scanError is the error of a bufio.Scanner that stopped at line: a
// line over the bound is an *Error naming it.
func scanError(sc *bufio.Scanner, name string, line int) error {
	err := sc.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return &Error{File: name, Line: line, Err: errValueTooLong}
	}
	return fmt.Errorf("reading %s: %w", name, err)
}

// OpenFile opens a dataset or trace file, refusing what is not a
// regular file before opening it: a FIFO would block the open (and the
// command) until a writer came, a device (/dev/zero) would never end.
func OpenFile(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v); give a dataset or trace file", path, st.Mode().Type())
	}
	return os.Open(path)
}
