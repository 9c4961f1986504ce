package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// stamps collects the httptrace times a Result reports (only those: a
// hook costs a call per request); the callbacks run on the transport's
// goroutines, so they are guarded.
type stamps struct {
	trace           httptrace.ClientTrace
	mu              sync.Mutex
	sent, firstByte time.Time
	conns           int  // connections the request was sent on (> 1: the transport replayed it)
	wrote           bool // the whole request was written on the last connection
	writes          int  // WroteRequest calls: the transport is done with the request's body
}

// bind points the trace's hooks at s; once per stamps, which a call
// keeps (and the client's pool with it) for as long as it lives.
func (s *stamps) bind() {
	s.trace.GotConn = s.gotConn
	s.trace.WroteRequest = s.wroteRequest
	s.trace.GotFirstResponseByte = s.gotFirstByte
}

func (s *stamps) gotConn(httptrace.GotConnInfo) {
	now := time.Now()
	s.mu.Lock()
	if s.sent.IsZero() {
		s.sent = now
	}
	s.conns++
	s.wrote = false
	s.mu.Unlock()
}

func (s *stamps) wroteRequest(info httptrace.WroteRequestInfo) {
	s.mu.Lock()
	s.wrote = info.Err == nil
	s.writes++
	s.mu.Unlock()
}

// phase is where a request that got no response failed: "connect" (no
// connection), "reset" (connected, the request not wholly written) or
// "dropped" (written whole, then the connection closed unanswered).
func (s *stamps) phase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.sent.IsZero():
		return "connect"
	case s.wrote && s.firstByte.IsZero():
		return "dropped"
	}
	return "reset"
}

func (s *stamps) gotFirstByte() {
	now := time.Now()
	s.mu.Lock()
	s.firstByte = now
	s.mu.Unlock()
}

func (s *stamps) copyTo(res *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sent.IsZero() {
		res.Sent = s.sent
	}
	res.FirstByte = s.firstByte
	if s.conns > 1 {
		// net/http replays a request on a new connection only when
		// nothing of it was written on the first (nothingWrittenError):
		// the target cannot have seen it. Counted all the same.
		res.Replays += s.conns - 1
		res.addNote(fmt.Sprintf("connection replaced %d time(s) before any byte was written", s.conns-1))
	}
}

// settled reports whether the transport can no longer touch the call:
// the request went out on one connection (no replay) and its write
// ended (WroteRequest, the last hook of a request, ran). Only then may
// the call's stamps, body reader and buffers serve another request.
func (s *stamps) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns == 1 && s.writes == 1
}

// call is one HTTP exchange in flight.
type call struct {
	st     stamps
	rd     bytes.Reader // the request body
	ctx    context.Context
	cancel context.CancelFunc
	resp   *http.Response
	body   io.Reader // size-limited: &lim, or a test's reader
	lim    limitedBody
	budget *atomic.Int64 // the client's bytes held (nil: no budget)
	limit  int64         // the client's MaxBytesInFlight
	held   int64         // bytes this call charged
	eof    bool          // the body was read to its end: nothing left to drain
	traced bool          // the caller's context has a trace, composed into st's hooks
	// hdr is the request's header map, emptied and refilled by the next
	// request (Client.header).
	hdr http.Header
	// req is the request body's buffer when the caller encodes into it
	// (jsonOnce), kept for the next request as buf is.
	req []byte
	// buf is the buffer readAll reads into, kept for the next request
	// when it is at most maxKeptBuf: what readAll returned is valid
	// until the call is done.
	buf []byte
}

// maxKeptBuf bounds the response buffer a recycled call keeps.
const maxKeptBuf = 64 << 10

// calls recycles the per-request state of exchanges that settled: the
// httptrace hooks (bound once), the body reader, the header map, the
// request and response buffers
// (a call and its four allocations per request otherwise).
type calls struct{ pool sync.Pool }

// get returns a call ready for a request.
func (p *calls) get() *call {
	if cl, ok := p.pool.Get().(*call); ok {
		return cl
	}
	cl := &call{}
	cl.st.bind()
	return cl
}

// put takes cl back once it is done, if the transport is through with it
// (stamps.settled); otherwise it is left to the garbage collector.
func (p *calls) put(cl *call) {
	if cl.traced || !cl.st.settled() {
		return
	}
	buf, req := cl.buf, cl.req
	if cap(buf) > maxKeptBuf {
		buf = nil
	}
	if cap(req) > maxKeptBuf {
		req = nil
	}
	st := &cl.st
	st.sent, st.firstByte, st.conns, st.wrote, st.writes = time.Time{}, time.Time{}, 0, false, 0
	cl.rd.Reset(nil)
	cl.ctx, cl.cancel, cl.resp, cl.body, cl.lim = nil, nil, nil, nil, limitedBody{}
	cl.budget, cl.limit, cl.held, cl.eof, cl.buf, cl.req = nil, 0, 0, false, buf[:0], req[:0]
	p.pool.Put(cl)
}
