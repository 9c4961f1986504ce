package remote

import (
	"bytes"
	"io"
)

// eventGate sits between a stream's body and its SSE reader and hands the
// reader at most one event (up to and including its "\n\n") per Read, so
// the reader holds nothing between events and what has arrived but is
// not yet read stays visible here: a complete data event buffered in the
// gate can be read without touching the network (ready). Streams whose
// events end otherwise (CRLF) pass through in larger pieces; they are
// then never ready, which costs only coalescing, never a wait.
type eventGate struct {
	r   io.Reader
	buf []byte
	off int   // unread data is buf[off:]
	err error // the body's error, after the buffer drains
}

// gateRead is how much the gate reads from the body at once: some twenty
// token events; a longer event passes in pieces (and is never ready).
const gateRead = 4 << 10

func (g *eventGate) Read(p []byte) (int, error) {
	if g.off == len(g.buf) {
		if g.err != nil {
			return 0, g.err
		}
		g.fill()
		if g.off == len(g.buf) {
			return 0, g.err
		}
	}
	b := g.buf[g.off:]
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		b = b[:i+2]
	}
	n := copy(p, b)
	g.off += n
	return n, nil
}

// fill reads once from the body into the (drained) buffer.
func (g *eventGate) fill() {
	if cap(g.buf) < gateRead {
		g.buf = make([]byte, 0, gateRead)
	}
	n, err := g.r.Read(g.buf[:gateRead])
	g.buf, g.off, g.err = g.buf[:n], 0, err
}

// ready reports whether a complete event with a data field is buffered
// next, so the SSE reader can deliver it without reading the network.
func (g *eventGate) ready() bool {
	b := g.buf[g.off:]
	i := bytes.Index(b, []byte("\n\n"))
	if i < 0 {
		return false
	}
	ev := b[:i+1]
	return bytes.HasPrefix(ev, []byte("data:")) || bytes.Contains(ev, []byte("\ndata:"))
}
