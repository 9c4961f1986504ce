package openai

import (
	"bytes"
	"errors"
	"io"
)

// Event is one server-sent event. Data is the event's data lines joined by
// "\n"; it is only valid until the next call to Next.
type Event struct {
	Name string // "event:" field; "" for the default "message"
	Data []byte
	ID   string
}

// ErrLineTooLong is returned by SSEReader.Next when a line, or an event's
// data lines joined, exceed the reader's maximum.
var ErrLineTooLong = errors.New("sse: line too long")

// DefaultMaxLine is the line limit of an SSEReader created with maxLine <= 0.
const DefaultMaxLine = 1 << 20

// SSEReader parses a text/event-stream (WHATWG HTML §9.2) from an
// io.Reader, incrementally and without allocating per event in the
// steady state.
//
// It is tolerant: lines may end in LF, CRLF or CR (even with the CR and
// LF in different reads), events may be split across reads anywhere, a
// leading BOM is skipped, comment lines (":…") and unknown fields are
// ignored, and several data lines are joined with "\n". It departs from
// the standard in one way: an event whose lines are complete but which
// the stream ends before its blank line is still delivered (many servers
// close right after "data: [DONE]\n"). A stream that ends in the middle
// of a line yields io.ErrUnexpectedEOF; a clean end yields io.EOF.
type SSEReader struct {
	r       io.Reader
	buf     []byte
	start   int // unread data is buf[start:end]
	end     int
	maxLine int
	err     error // sticky read error
	skipLF  bool  // the last line ended in CR: a following LF belongs to it
	noLF    int   // buf[:noLF] (from start) is known to hold no LF
	bomDone bool
	grow    func(n int64) error // charges a buffer growth of n bytes (nil: free)

	data    []byte
	hasData bool
	name    []byte
	nameStr string
	id      []byte
	idStr   string
}

// NewSSEReader returns a reader of r that rejects lines longer than
// maxLine bytes (DefaultMaxLine when maxLine <= 0).
func NewSSEReader(r io.Reader, maxLine int) *SSEReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &SSEReader{r: r, buf: make([]byte, min(32<<10, maxLine+2)), maxLine: maxLine}
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (clean end), io.ErrUnexpectedEOF (cut inside a line), ErrLineTooLong,
// or the underlying read error; errors are sticky.
func (s *SSEReader) Next() (Event, error) {
	for {
		line, ok, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && s.hasData {
				return s.dispatch(), nil
			}
			return Event{}, err
		}
		if !ok {
			continue
		}
		if len(line) == 0 {
			if s.hasData {
				return s.dispatch(), nil
			}
			s.name, s.hasData = s.name[:0], false
			continue
		}
		if err := s.field(line); err != nil {
			s.err, s.start, s.end, s.noLF = err, 0, 0, 0
			return Event{}, err
		}
	}
}

func (s *SSEReader) dispatch() Event {
	ev := Event{Data: s.data, Name: s.intern(&s.nameStr, s.name), ID: s.intern(&s.idStr, s.id)}
	s.data, s.hasData = s.data[:0], false
	s.name = s.name[:0]
	return ev
}

// intern returns b as a string, reusing the previous string when equal.
func (s *SSEReader) intern(cache *string, b []byte) string {
	if string(b) != *cache {
		*cache = string(b)
	}
	return *cache
}

// field applies one non-empty line to the event being built.
func (s *SSEReader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if err := s.room(len(value) + 1); err != nil {
			return err
		}
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	case "event":
		s.name = append(s.name[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.id = append(s.id[:0], value...)
		}
	}
	return nil
}

// freeData is how much of an event's data buffer is not charged, as the
// line buffer's first 32 KiB are not.
const freeData = 32 << 10

// room makes room for n more bytes of event data: an event's data lines
// joined are bounded as one line is (ErrLineTooLong), and the data
// buffer's growth past freeData is charged like the line buffer's (many
// data lines without a blank one grew it unseen by the budget).
func (s *SSEReader) room(n int) error {
	need := len(s.data) + n
	if need > s.maxLine+1 {
		return ErrLineTooLong
	}
	if need <= cap(s.data) {
		return nil
	}
	newCap := min(max(need, 2*cap(s.data)), s.maxLine+1)
	if s.grow != nil && newCap > freeData {
		if err := s.grow(int64(newCap - max(cap(s.data), freeData))); err != nil {
			return err
		}
	}
	nd := make([]byte, len(s.data), newCap)
	copy(nd, s.data)
	s.data = nd
	return nil
}

// line returns the next complete line without its terminator. ok is
// false when a lone LF completing a CRLF split across reads was consumed.
// The returned slice is valid until the next call.
func (s *SSEReader) line() (line []byte, ok bool, err error) {
	for {
		b := s.buf[s.start:s.end]
		if s.skipLF && len(b) > 0 {
			s.skipLF = false
			if b[0] == '\n' {
				s.start++
				return nil, false, nil
			}
		}
		if !s.bomDone && (len(b) >= 3 || s.err != nil) {
			s.bomDone = true
			if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
				s.start += 3
				continue
			}
		}
		if s.bomDone {
			i := s.indexLF()
			if i < 0 {
				i = bytes.IndexByte(b, '\r')
			}
			if i >= 0 {
				line, err := s.cut(b, i)
				return line, err == nil, err
			}
		}
		if err := s.fill(); err != nil {
			return nil, false, err
		}
	}
}

// indexLF finds the first LF in the unread data, relative to s.start. It
// remembers how far the buffer is known to hold no LF, so that a stream of
// CR-terminated lines is not rescanned to the end of the buffer per line.
func (s *SSEReader) indexLF() int {
	from := max(s.start, min(s.noLF, s.end))
	if i := bytes.IndexByte(s.buf[from:s.end], '\n'); i >= 0 {
		return from + i - s.start
	}
	s.noLF = s.end
	return -1
}

// cut ends the line at the first CR or LF at or before index nl.
func (s *SSEReader) cut(b []byte, nl int) ([]byte, error) {
	i := nl
	if cr := bytes.IndexByte(b[:nl], '\r'); cr >= 0 {
		i = cr
	}
	line := b[:i]
	if b[i] == '\r' {
		if i+1 < len(b) {
			if b[i+1] == '\n' {
				i++
			}
		} else {
			s.skipLF = true
		}
	}
	s.start += i + 1
	if len(line) > s.maxLine {
		s.err = ErrLineTooLong
		s.start, s.end, s.noLF = 0, 0, 0
		return nil, s.err
	}
	return line, nil
}

// fill reads more data, compacting or growing the buffer. It returns the
// sticky error once the buffer holds no complete line and no more data
// can come.
func (s *SSEReader) fill() error {
	if s.err != nil {
		if s.err == io.EOF && s.end > s.start {
			s.start = s.end
			s.err = io.ErrUnexpectedEOF
		}
		return s.err
	}
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.noLF = max(s.noLF-s.start, 0)
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		if s.end > s.maxLine {
			s.err = ErrLineTooLong
			s.start, s.end, s.noLF = 0, 0, 0
			return s.err
		}
		n := min(2*len(s.buf), s.maxLine+2)
		if s.grow != nil {
			if err := s.grow(int64(n - len(s.buf))); err != nil {
				s.err = err
				s.start, s.end, s.noLF = 0, 0, 0
				return err
			}
		}
		nb := make([]byte, n)
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	s.err = io.ErrNoProgress
	return nil
}
