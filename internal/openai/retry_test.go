package openai

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

const completionJSON = `{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`

// idleCloser is a target that answers the first request of each
// connection with keep-alive, then closes the connection when the next
// request arrives on it, without answering: the race of a server's idle
// timeout firing just as the client reuses the connection.
func idleCloser(t *testing.T) (url string, served *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	served = &atomic.Int64{}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveOnce(conn, served)
		}
	}()
	return "http://" + ln.Addr().String(), served
}

func serveOnce(conn net.Conn, served *atomic.Int64) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	served.Add(1)
	resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(completionJSON)) + "\r\n\r\n" + completionJSON
	if _, err := io.WriteString(conn, resp); err != nil {
		return
	}
	if req, err := http.ReadRequest(br); err == nil { // the reuse: read it, then hang up
		_, _ = io.Copy(io.Discard, req.Body)
	}
}

// TestIdleCloseRetried: a POST sent on a kept-alive connection the target
// closed without answering is retried on a fresh connection, not failed
// (net/http replays only requests it may treat as idempotent).
func TestIdleCloseRetried(t *testing.T) {
	url, served := idleCloser(t)
	c, err := NewClient(Config{BaseURL: url, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}}
	for i := range 3 {
		res := c.Chat(context.Background(), req)
		if res.Err != nil {
			t.Fatalf("request %d: %v (%s); want the transport to retry it on a new connection", i, res.Err, res.ErrClass)
		}
		if replayed := strings.Contains(res.Note, "sent 2 times"); replayed != (i > 0) {
			t.Errorf("request %d: note %q; the replay (every request after the first) is noted", i, res.Note)
		}
	}
	if got := served.Load(); got != 3 {
		t.Errorf("target answered %d requests, want 3", got)
	}
	if d := c.ConnStats().Dials; d < 2 {
		t.Errorf("%d dials; the retries should have dialed again", d)
	}
}
