package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a goroutine-safe stderr sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs Main with args in the background and returns the URL
// from its listening line, plus a stop function returning the exit code.
func startServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	url, _, stop := startServeLog(t, args...)
	return url, stop
}

// startServeLog is startServe that also returns serve's stderr.
func startServeLog(t *testing.T, args ...string) (string, *syncBuffer, func() int) {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, args, pw, stderr)
		pw.Close()
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		url, found := strings.CutPrefix(line, "sagebench serve: listening on ")
		if !ok || !found {
			cancel()
			t.Fatalf("first stdout line %q; stderr: %s", line, stderr.String())
		}
		return url, stderr, func() int {
			cancel()
			select {
			case c := <-code:
				return c
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not stop after its context was cancelled")
				return -1
			}
		}
	case c := <-code:
		t.Fatalf("serve exited %d before listening: %s", c, stderr.String())
	case <-time.After(60 * time.Second): // building the index took 20+ s beside CI's Ray clusters
		cancel()
		t.Fatal("serve printed no listening line")
	}
	return "", nil, nil
}

func TestServeStreamsAndStops(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "stack.yaml")
	if err := os.WriteFile(cfg, []byte("index: {size: 100}\nlimits: {shutdown_timeout: 2s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, "serve", "--listen", "127.0.0.1:0", "--config", cfg, "--policy", "priority")
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(body), "chat.completion.chunk") != 5 {
		t.Fatalf("stream: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(url + "/admin/policy")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "priority") {
		t.Errorf("--policy not applied: %s", b)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d after SIGINT-like cancel, want 0", code)
	}
}

func TestServeEngineSubcommand(t *testing.T) {
	url, stop := startServe(t, "serve", "engine", "--profile", "bge-small-cpu", "--listen", "127.0.0.1:0", "--seed", "7")
	resp, err := http.Post(url+"/v1/embeddings", "application/json", strings.NewReader(`{"input":["a","b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(b), `"object":"embedding"`) != 2 {
		t.Fatalf("embeddings: %d %.300s", resp.StatusCode, b)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
}

func TestServeBadConfigExits2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"unknown key", []string{"serve", "--config", write("a.yaml", "engins: []\n")}, "engins"},
		{"impossible value", []string{"serve", "--config", write("b.yaml", "limits: {max_tokens: -3}\n")}, "limits.max_tokens"},
		{"unknown profile", []string{"serve", "--listen", "127.0.0.1:0", "--config", write("c.yaml", "engines: [{id: x, kind: llm, profile: gpt-9}]\n")}, "gpt-9"},
		{"missing file", []string{"serve", "--config", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{"bad policy", []string{"serve", "--policy", "lottery"}, "lottery"},
		{"bad flag", []string{"serve", "--nope"}, "nope"},
		{"engine without profile", []string{"serve", "engine"}, "--profile"},
		{"engine unknown profile", []string{"serve", "engine", "--profile", "gpt-9", "--listen", "127.0.0.1:0"}, "gpt-9"},
		{"non-loopback without token", []string{"serve", "--listen", "0.0.0.0:0"}, "SAGEBENCH_ADMIN_TOKEN"},
	}
	t.Setenv("SAGEBENCH_ADMIN_TOKEN", "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(t.Context(), tc.args, &stdout, &stderr)
			if code != ExitUsage || !strings.Contains(stderr.String(), tc.mention) {
				t.Fatalf("exit %d, stderr %q; want 2 naming %q", code, stderr.String(), tc.mention)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q on a usage error", stdout.String())
			}
		})
	}
}
