package proxy

import (
	"net"
	"net/http"
	"sync"
)

// Conns tracks a server's open connections so they can be cut. Hook
// Track into http.Server.ConnState.
type Conns struct {
	mu   sync.Mutex
	open map[net.Conn]struct{}
}

// Track follows c through its states (http.Server.ConnState).
func (cs *Conns) Track(c net.Conn, st http.ConnState) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.open == nil {
		cs.open = map[net.Conn]struct{}{}
	}
	switch st {
	case http.StateNew:
		cs.open[c] = struct{}{}
	case http.StateHijacked, http.StateClosed:
		delete(cs.open, c)
	}
}

// Cut drops every open connection at once — with a TCP reset, so the
// peer sees "connection reset" and not an orderly end — and returns how
// many it dropped.
func (cs *Conns) Cut() int {
	cs.mu.Lock()
	conns := make([]net.Conn, 0, len(cs.open))
	for c := range cs.open {
		conns = append(conns, c)
	}
	cs.open = map[net.Conn]struct{}{}
	cs.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	return len(conns)
}
