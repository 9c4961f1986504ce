package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// LineError is one unreadable line of a JSON-lines file.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// maxLineErrors bounds how many bad lines one read reports; the rest are
// counted in a final error so that nothing is skipped silently.
const maxLineErrors = 20

// maxLine is the longest JSON line accepted (a request with a long token
// timeline stays far below it).
const maxLine = 16 << 20

// maxRunBytes bounds run.json (a run's is a few kilobytes).
const maxRunBytes = 16 << 20

// ReadBounded reads at most limit bytes of path; a longer file (or an
// endless one such as /dev/zero or a FIFO, whose size says nothing) is an
// error after limit+1 bytes.
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, err
}

// ReadRun reads and checks run.json at path.
func ReadRun(path string) (*Run, error) {
	b, err := ReadBounded(path, maxRunBytes)
	if err != nil {
		return nil, fmt.Errorf("reading run: %w", err)
	}
	r, err := DecodeRun(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Trailing reports whether anything but white space follows the value dec
// has decoded. (dec.More alone says no before a stray "]" or "}", so
// `{…}]` would pass for one document.)
func Trailing(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err != io.EOF
}

// DecodeRun parses a run.json document. It rejects trailing data, a
// missing run_id and a missing workload, so a truncated or foreign JSON
// document is never taken for a run.
func DecodeRun(b []byte) (*Run, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var r Run
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding run.json: %w", err)
	}
	if Trailing(dec) {
		return nil, errors.New("decoding run.json: trailing data after the document")
	}
	if r.RunID == "" {
		return nil, errors.New("run.json: run_id is empty")
	}
	if r.Workload == "" {
		return nil, errors.New("run.json: workload is empty")
	}
	return &r, nil
}

// ReadRequests reads requests.jsonl from r (named file in errors) and calls
// each for every request, in order. Unreadable lines (bad JSON, a truncated
// last line, a missing id, a negative latency) are returned as *LineError
// values joined in the error; reading goes on past them.
func ReadRequests(r io.Reader, file string, each func(line int, req Request)) error {
	return readLines(r, file, decodeRequest, each)
}

// ErrCutTail marks the last line of a file that ends without a newline
// and does not decode: the tail a crash or a full disk cut off. Readers
// report it as a *LineError wrapping ErrCutTail and keep every line
// before it, so a caller can tell "the run was cut short" from "the file
// is corrupt" with errors.Is.
var ErrCutTail = errors.New("last line cut short (the writer stopped mid-line: a crash or a full disk)")

// errLineTooLong is the error of a line over maxLine; reading goes on.
var errLineTooLong = fmt.Errorf("line longer than %d bytes (skipped)", maxLine)

// readLines decodes every non-blank line of r with decode and hands the
// good ones to each; bad ones become *LineError values (the first
// maxLineErrors of them, then a count). A line over maxLine is skipped
// without being held in memory, and a cut last line is ErrCutTail.
func readLines[T any](r io.Reader, file string, decode func([]byte) (T, error), each func(int, T)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var errs []error
	bad, line := 0, 0
	report := func(err error) {
		bad++
		if bad <= maxLineErrors {
			errs = append(errs, &LineError{File: file, Line: line, Err: err})
		}
	}
	for {
		raw, complete, err := readLine(br)
		if len(raw) == 0 && err != nil {
			if err != io.EOF {
				errs = append(errs, &LineError{File: file, Line: line + 1, Err: err})
			}
			break
		}
		line++
		switch text := bytes.TrimSpace(raw); {
		case errors.Is(err, errLineTooLong):
			report(err)
		case len(text) == 0:
		default:
			v, derr := decode(text)
			switch {
			case derr != nil && !complete:
				report(fmt.Errorf("%w: %v", ErrCutTail, derr))
			case derr != nil:
				report(derr)
			default:
				each(line, v)
			}
		}
	}
	if bad > maxLineErrors {
		errs = append(errs, fmt.Errorf("%s: %d more unreadable lines", file, bad-maxLineErrors))
	}
	return errors.Join(errs...)
}

// readLine returns the next line without its newline and whether it had
// one. A line over maxLine is read to its end but returned as a
// one-byte placeholder with errLineTooLong.
func readLine(br *bufio.Reader) (line []byte, complete bool, err error) {
	var buf []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long && len(buf)+len(chunk) > maxLine+1 {
			long, buf = true, nil
		}
		if !long {
			buf = append(buf, chunk...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case long && (err == nil || err == io.EOF):
			return []byte{'!'}, err == nil, errLineTooLong
		case err == nil:
			return buf[:len(buf)-1], true, nil
		}
		return buf, false, err
	}
}

func decodeRequest(text []byte) (Request, error) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("decoding request: %w", err)
	}
	if Trailing(dec) {
		return req, errors.New("decoding request: trailing data on the line")
	}
	if req.ID == "" {
		return req, errors.New("request without id")
	}
	if req.E2EMs < 0 || req.ServiceMs < 0 {
		return req, fmt.Errorf("request %s: negative latency (e2e_ms %v, service_ms %v)", req.ID, req.E2EMs, req.ServiceMs)
	}
	return req, nil
}

// ReadRequestsFile is ReadRequests over the file at path, which must be a
// regular file: a device or FIFO in its place (a link to /dev/zero) has
// no end to read to.
func ReadRequestsFile(path string, each func(line int, req Request)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading requests: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("reading requests: %s is not a regular file", path)
	}
	return ReadRequests(f, path, each)
}

// ReadUnified reads unified_results.jsonl rows from r like ReadRequests.
// A row needs backend, workload and run_id.
func ReadUnified(r io.Reader, file string, each func(line int, u Unified)) error {
	return readLines(r, file, decodeUnified, each)
}

func decodeUnified(text []byte) (Unified, error) {
	var u Unified
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&u); err != nil {
		return u, fmt.Errorf("decoding unified row: %w", err)
	}
	if Trailing(dec) {
		return u, errors.New("decoding unified row: trailing data on the line")
	}
	switch {
	case u.Backend == "":
		return u, errors.New("unified row: backend is empty")
	case u.Workload == "":
		return u, errors.New("unified row: workload is empty")
	case u.RunID == "":
		return u, errors.New("unified row: run_id is empty")
	}
	return u, nil
}
