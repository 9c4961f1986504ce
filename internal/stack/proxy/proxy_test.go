package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/proxy"
)

// slowStream writes a line every 50 ms for a second, flushing each.
func slowStream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for range 20 {
		if _, err := io.WriteString(w, "data: x\n\n"); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func TestProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(slowStream))
	p, err := proxy.Start("127.0.0.1:0", up.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	get := func() (string, error) {
		resp, err := http.Get(p.URL() + "/v1/chat")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b), err
	}
	if s, err := get(); err != nil || !strings.HasSuffix(s, "data: [DONE]\n\n") {
		t.Fatalf("streamed through: %q %v", s, err)
	}
	cut := make(chan error, 1)
	go func() { _, err := get(); cut <- err }()
	time.Sleep(300 * time.Millisecond)
	if n := p.Cut(); n != 1 {
		t.Errorf("cut %d connections; want the one in flight", n)
	}
	if err := <-cut; err == nil {
		t.Error("a cut stream read to its end")
	}
	p.Drop(1)
	if s, err := get(); err == nil {
		t.Errorf("a dropped answer read to its end: %q", s)
	}
	up.Close()
	if s, err := get(); err != nil || !strings.HasPrefix(s, "502") || strings.Contains(s, "127.0.0.1") {
		t.Errorf("upstream down: %q %v; want 502 without its address", s, err)
	}
}
