package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sagebench/sagebench/internal/stack/proxy"
)

// Defaults of the server's own limits (Limits.MaxConns, BodyTimeout).
const (
	DefaultMaxConns    = 4096
	DefaultBodyTimeout = 10 * time.Second
	// overflowConns bounds the connections past MaxConns being answered
	// at once (each within overflowTimeout); past both a connection is
	// closed as soon as it is accepted.
	overflowConns   = 256
	overflowTimeout = 2 * time.Second
)

// The server holds two kinds of peer that never finish their request:
// one that sends headers and part of a body and stops (each used to hold
// a goroutine and a file descriptor for as long as it liked: 19,990 of
// them exhausted the process's descriptors and /health went silent), and
// plain connection floods. Three bounds:
//
//   - every request body is read whole, with a deadline (body_timeout),
//     before the handler runs; a peer that does not finish it gets 408
//     and is disconnected;
//   - at most max_conns connections are served at once;
//   - a connection past max_conns is answered by a small overflow server
//     with tight timeouts: GET /health as usual (so that a health check
//     still works under attack), anything else 503 with Retry-After, and
//     closed. Past overflowConns of those too, it is closed at once.

// servers builds the main server on a connection gate over ln, and the
// overflow server.
func (s *Stack) servers(ln net.Listener, base context.Context) (main, over *http.Server) {
	l := s.cfg.Limits
	maxConns := l.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	bodyTimeout := l.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = DefaultBodyTimeout
	}
	maxBody := max(l.MaxBodyBytes, 1<<20)
	refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "sagebench_server_connections_over_limit_total",
		Help: "Connections past limits.max_conns, answered by the overflow server (or closed when it was full too)."})
	_ = s.opts.Registry.Register(refused)
	s.gate = newConnGate(ln, maxConns, overflowConns, refused)
	h := s.withTokenize(s.gw.Handler())
	errLog := slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug)
	main = &http.Server{
		Handler:           readBodies(proxy.Dropping(&s.drop, h), maxBody, bodyTimeout),
		ConnState:         s.conns.Track, // the drill's cut closes them
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          errLog,
	}
	over = &http.Server{
		Handler:           overflowHandler(h, maxConns),
		ReadHeaderTimeout: overflowTimeout,
		ReadTimeout:       overflowTimeout,
		WriteTimeout:      overflowTimeout,
		ErrorLog:          errLog,
	}
	over.SetKeepAlivesEnabled(false)
	return main, over
}

// readBodies reads a request's body (up to limit+1 bytes: the handler's
// own limit still answers 413) before h runs, with a read deadline of
// timeout; a body not sent in time gets 408 and the connection is
// closed. The deadline is cleared before h runs, so a long stream is
// not cut by it.
func readBodies(h http.Handler, limit int64, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
		b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if deadline {
			_ = rc.SetReadDeadline(time.Time{})
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			w.Header().Set("Connection", "close")
			writePlainError(w, http.StatusRequestTimeout, "request_timeout",
				fmt.Sprintf("the request body did not arrive within %v (limits.body_timeout)", timeout))
			return
		}
		if err != nil {
			return // the peer went away mid-body: nobody to answer
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	})
}

// overflowHandler answers a connection past max_conns: GET /health as
// the gateway does, anything else 503, and the connection is closed.
func overflowHandler(h http.Handler, maxConns int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/health" {
			h.ServeHTTP(w, r)
			return
		}
		// Do not wait for the rest of a body: close as soon as answered.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		w.Header().Set("Retry-After", "1")
		writePlainError(w, http.StatusServiceUnavailable, "too_many_connections",
			fmt.Sprintf("the server is at its connection limit (limits.max_conns = %d); retry later", maxConns))
	})
}

func writePlainError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"server_error","code":%q}}`+"\n", msg, code)
}

// connGate admits at most cap(slots) connections to the main server's
// Accept; one past it goes to overflow (at most cap(spare) at once), and
// one past both is closed at once.
type connGate struct {
	net.Listener
	slots    chan struct{}
	spare    chan struct{}
	overflow *chanListener
	refused  prometheus.Counter
}

func newConnGate(ln net.Listener, maxConns, spare int, refused prometheus.Counter) *connGate {
	return &connGate{Listener: ln, slots: make(chan struct{}, maxConns), spare: make(chan struct{}, spare),
		overflow: newChanListener(ln.Addr()), refused: refused}
}

// Accept returns the next connection within the limit, handing the
// others to the overflow server (or closing them).
func (g *connGate) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				g.overflow.Close()
			}
			return nil, err
		}
		select {
		case g.slots <- struct{}{}:
			return &gatedConn{Conn: c, slot: g.slots}, nil
		default:
		}
		g.refused.Inc()
		select {
		case g.spare <- struct{}{}:
			if !g.overflow.push(&gatedConn{Conn: c, slot: g.spare}) {
				c.Close()
				<-g.spare
			}
		default:
			c.Close()
		}
	}
}

// gatedConn gives its slot back when closed (once).
type gatedConn struct {
	net.Conn
	slot chan struct{}
	once sync.Once
}

func (c *gatedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slot })
	return err
}

// chanListener is a net.Listener fed by connGate.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// push hands c to the overflow server; false when it is closed or busy
// for longer than a moment.
func (l *chanListener) push(c net.Conn) bool {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case l.conns <- c:
		return true
	case <-l.done:
	case <-t.C:
	}
	return false
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
