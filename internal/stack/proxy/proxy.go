package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Proxy forwards HTTP from its own loopback address to an upstream.
type Proxy struct {
	srv   *http.Server
	url   string
	conns Conns
	drop  Countdown
	done  chan struct{}
}

// Start listens on listen (host:port; port 0 picks a free one) and
// forwards every request to upstream (http://host:port). Close stops it.
func Start(listen, upstream string) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("proxy upstream %q: want http://host:port", upstream)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.Host = r.In.Host },
		FlushInterval: -1, // stream: every write goes out at once
		Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second},
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "upstream unavailable: "+upstreamError(err), http.StatusBadGateway)
		},
	}
	p := &Proxy{url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	p.srv = &http.Server{Handler: Dropping(&p.drop, rp), ConnState: p.conns.Track, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = p.srv.Serve(ln); close(p.done) }()
	return p, nil
}

// upstreamError names why the upstream failed, without its address.
func upstreamError(err error) string {
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return "connection refused"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before the answer"
	case errors.Is(err, context.Canceled):
		return "request canceled"
	}
	return "connection failed"
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return p.url }

// Cut drops every established client connection (see Conns.Cut); the
// requests they carried are cancelled upstream.
func (p *Proxy) Cut() int { return p.conns.Cut() }

// Drop makes the next n API requests (/v1/…) get the start of an answer
// and then a closed connection: the request is left without its result,
// and the client cannot replay it elsewhere.
func (p *Proxy) Drop(n int) { p.drop.Add(n) }

// Dropping wraps h with the drop fault: while c has requests to drop, an
// API request (/v1/…) is Abandoned — the answer starts and never ends, so
// the client has a response and cannot replay the request elsewhere (a
// connection closed before any byte may be replayed by the transport),
// and the request is left without its result.
func Dropping(c *Countdown, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") && c.Take() {
			Abandon(w)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Abandon starts an answer and closes the connection without finishing
// it (the drop fault).
func Abandon(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, buf, err := hj.Hijack(); err == nil {
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n{")
			_ = buf.Flush()
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // closes the connection without a response
}

// Countdown counts faults still to inject; the zero value holds none.
type Countdown struct{ n atomic.Int64 }

// Add adds n (> 0) to the count.
func (c *Countdown) Add(n int) {
	if n > 0 {
		c.n.Add(int64(n))
	}
}

// Take takes one from the count and reports whether there was one.
func (c *Countdown) Take() bool {
	for {
		v := c.n.Load()
		if v <= 0 {
			return false
		}
		if c.n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	<-p.done
	return err
}
