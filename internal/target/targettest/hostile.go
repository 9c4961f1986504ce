package targettest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Hostile behaviours: each is a way a broken or malicious target answers
// every inference and admin call (GET /health always answers 200, and
// GET /v1/models too unless the behaviour is about it, so that a target
// opens and the harness reaches its traffic).
const (
	Truncate = "truncate" // a 200 whose body stops mid-way: Content-Length promises more, then the connection closes
	Huge     = "huge"     // a 200 whose body never ends
	Echo     = "echo"     // every error body, status 500 and stream error event echoes the request's headers (Authorization included)
	Redirect = "redirect" // 307 to another port of the same host, which records what reaches it (see Stolen)
	Reset    = "reset"    // reads the request, then resets the connection without an answer
)

// HostileModes lists the behaviours a hostile-target suite covers (with
// Garbage and Hang of Server).
var HostileModes = []string{Garbage, Truncate, Hang, Huge, Echo, Redirect, Reset}

// Hostile is a target that misbehaves in one way on every call. It binds
// 127.0.0.1 on free ports (its own and its redirect target's).
type Hostile struct {
	*httptest.Server
	Mode  string
	thief *httptest.Server

	closing chan struct{}
	once    sync.Once
	mu      sync.Mutex
	stolen  []string
}

// NewHostile starts a hostile target; Close it when done.
func NewHostile(mode string) *Hostile {
	h := &Hostile{Mode: mode, closing: make(chan struct{})}
	h.thief = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.stolen = append(h.stolen, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization"))
		h.mu.Unlock()
		io.WriteString(w, `{"policy":"fifo","data":[]}`)
	}))
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// Stolen lists the requests that reached the redirect target, with the
// Authorization each carried: a harness that follows no redirect leaves
// it empty.
func (h *Hostile) Stolen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.stolen...)
}

// Close releases hanging handlers and stops both servers.
func (h *Hostile) Close() {
	h.once.Do(func() { close(h.closing) })
	h.CloseClientConnections()
	h.Server.Close()
	h.thief.Close()
}

func (h *Hostile) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 8<<20))
	if r.URL.Path == "/health" || (r.URL.Path == "/v1/models" && h.Mode != Redirect && h.Mode != Echo) {
		io.WriteString(w, `{"object":"list","data":[{"id":"m"}]}`)
		return
	}
	switch h.Mode {
	case Garbage:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "\x00\xff<html>not json {\"choices\":[{\"delta\":")
	case Truncate:
		hijack(w, func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: 100000\r\n\r\n", contentType(r))
			io.WriteString(c, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n"+`{"data":[{"index":0,"embe`)
		})
	case Hang:
		select {
		case <-r.Context().Done():
		case <-h.closing:
		}
	case Huge:
		h.huge(w, r)
	case Echo:
		h.echo(w, r)
	case Redirect:
		http.Redirect(w, r, h.thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
	case Reset:
		hijack(w, func(c net.Conn) {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		})
	default:
		http.Error(w, "unknown hostile mode "+h.Mode, http.StatusInternalServerError)
	}
}

func contentType(r *http.Request) string {
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return "text/event-stream"
	}
	return "application/json"
}

// hijack takes the connection over, lets write use it, and closes it.
func hijack(w http.ResponseWriter, write func(net.Conn)) {
	c, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	write(c)
	c.Close()
}

// huge writes an endless well-formed-looking body until the client leaves.
func (h *Hostile) huge(w http.ResponseWriter, r *http.Request) {
	ct := contentType(r)
	w.Header().Set("Content-Type", ct)
	chunk := `{"choices":[{"delta":{"content":"` + strings.Repeat("x", 4000) + `"}}]}`
	if ct == "application/json" {
		io.WriteString(w, `{"data":[{"index":0,"embedding":[`)
		chunk = strings.Repeat("0.5,", 1000)
	} else {
		chunk = "data: " + chunk + "\n\n"
	}
	for {
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-h.closing:
			return
		default:
		}
	}
}

// echo answers an error that carries every request header back.
func (h *Hostile) echo(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	r.Header.Write(&b)
	headers := strings.ReplaceAll(b.String(), "\r\n", "; ")
	if contentType(r) == "text/event-stream" && r.URL.Path == "/v1/chat/completions" {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: error\ndata: {\"error\":{\"message\":%q}}\n\n", "you sent "+headers)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `{"error":{"message":%q,"auth":%q}}`, "you sent "+headers, r.Header.Get("Authorization"))
}
