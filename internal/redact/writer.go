package redact

import (
	"bytes"
	"io"
	"sync"
)

// Set is a Redactor whose secrets can be added while it is in use: a
// command's terminal streams exist before it has read the config that
// names its secrets. It is safe for concurrent use; the zero value masks
// credential-like fields and URL passwords only.
type Set struct {
	mu sync.RWMutex
	r  *Redactor
}

// Add adds secret values (empty ones are ignored).
func (s *Set) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []string
	if s.r != nil {
		all = s.r.secrets
	}
	s.r = New(append(append([]string(nil), all...), secrets...)...)
}

// Redactor returns the rule for the secrets added so far.
func (s *Set) Redactor() *Redactor {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r
}

// String applies the rule for the secrets added so far.
func (s *Set) String(x string) string { return s.Redactor().String(x) }

// Known masks the secrets added so far and URL passwords (see
// Redactor.Known): the rule for a command's terminal streams.
func (s *Set) Known(x string) string { return s.Redactor().Known(x) }

// URL masks the password of a URL's user info (scheme://user:PASSWORD@…),
// whether or not the URL parses: for echoing a URL a user gave in an
// error message.
func URL(s string) string { return (*Redactor)(nil).Known(s) }

// maxPending bounds the bytes a Writer holds while waiting for the end
// of a line; past it the text so far is written (redacted) at once.
const maxPending = 64 << 10

// Writer passes text through a rule line by line: it holds what it is
// given until a line ends (at '\n' or '\r', so that a progress line
// redrawn in place still shows at once), then writes the line redacted.
// A secret split across two Write calls is therefore still seen whole.
// It is safe for concurrent use; Flush writes a last unfinished line.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	rule func(string) string
	buf  []byte
}

// NewWriter returns a Writer applying rule (e.g. Set.Known) to what it
// writes to w.
func NewWriter(w io.Writer, rule func(string) string) *Writer {
	return &Writer{w: w, rule: rule}
}

// Write takes p; it reports len(p) unless the underlying writer failed.
func (x *Writer) Write(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.buf = append(x.buf, p...)
	end := bytes.LastIndexAny(x.buf, "\r\n") + 1
	if end == 0 && len(x.buf) > maxPending {
		end = len(x.buf)
	}
	if end == 0 {
		return len(p), nil
	}
	_, err := io.WriteString(x.w, x.rule(string(x.buf[:end])))
	x.buf = append(x.buf[:0], x.buf[end:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held (a line without its end), redacted.
func (x *Writer) Flush() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(x.w, x.rule(string(x.buf)))
	x.buf = x.buf[:0]
	return err
}

// Unwrap returns the writer underneath (to ask whether it is a terminal).
func (x *Writer) Unwrap() io.Writer { return x.w }
