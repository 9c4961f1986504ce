package openai

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestResetAfterWrite: a target that reads the whole request and then
// closes (or resets) the connection without answering is reset, not
// connect (which the docs reserve for refused/unreachable).
func TestResetAfterWrite(t *testing.T) {
	for _, rst := range []bool{false, true} {
		name := map[bool]string{false: "close", true: "RST"}[rst]
		t.Run(name, func(t *testing.T) {
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				if tc, ok := conn.(*net.TCPConn); ok && rst {
					tc.SetLinger(0)
				}
				conn.Close()
			}), Config{})
			res := c.Chat(context.Background(), ChatRequest{Model: "m", Stream: true})
			if res.ErrClass != ClassDropped {
				t.Fatalf("class %q (err %v), want dropped_after_send after the request was written", res.ErrClass, res.Err)
			}
		})
	}
}

// TestRedirectNotFollowed: a 307/302 to another port of the same host
// must not carry the API key there; the 3xx is an http_4xx error.
func TestRedirectNotFollowed(t *testing.T) {
	t.Setenv("SAGEBENCH_TEST_KEY", "sk-redirect-secret")
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
	}))
	defer thief.Close()
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, thief.URL+r.URL.Path, code)
		}), Config{APIKeyEnv: "SAGEBENCH_TEST_KEY"})
		res := c.Chat(context.Background(), ChatRequest{Model: "m"})
		if res.ErrClass != ClassHTTP4xx {
			t.Errorf("%d: class %q, want http_4xx", code, res.ErrClass)
		}
		if _, err := c.Models(context.Background()); err == nil {
			t.Errorf("%d: Models followed the redirect", code)
		}
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// TestEchoedCredentialsMasked: credentials the client does not know
// (another header a proxy added, a token in a JSON field) are masked too.
func TestEchoedCredentialsMasked(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"denied","request":{"headers":{"Authorization":"Bearer proxy-secret-777"},"api_key":"other-secret-888"}}`, http.StatusForbidden)
	}), Config{})
	res := c.Chat(context.Background(), ChatRequest{Model: "m"})
	if res.Err == nil || strings.Contains(res.Err.Error(), "secret-777") || strings.Contains(res.Err.Error(), "secret-888") {
		t.Fatalf("error %v leaks a credential", res.Err)
	}
}

// roundTrip answers every request with one canned response.
type roundTrip struct {
	status int
	ctype  string
	body   []byte
}

func (rt roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: rt.status, Header: http.Header{"Content-Type": {rt.ctype}},
		Body: io.NopCloser(bytes.NewReader(rt.body)), Request: r}, nil
}

// FuzzDecodeResponses feeds one body to the non-streamed decoders (chat
// completion, embeddings, retrieve, models): none may panic, a failure
// has a known class and never the key, a success is well formed.
func FuzzDecodeResponses(f *testing.F) {
	const key = "sk-fuzz-KEY-123456"
	for _, s := range []string{
		`{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		`{"data":[{"index":0,"embedding":[0.1,0.2]},{"index":1,"embedding":[1]}]}`,
		`{"data":[{"id":"d1","score":0.5,"text":"x"}]}`,
		`{"data":[{"id":"m"}]}`,
		`{"error":{"message":"Bearer ` + key + `"}}`,
		`{"data":[{"index":1,"embedding":[1]},{"index":1,"embedding":[1]}]}`,
		strings.Repeat("[", 10000),
		`{"data":[` + strings.Repeat(`{"index":0,"embedding":[1e309]},`, 50) + `]}`,
	} {
		f.Add([]byte(s), 200)
	}
	f.Add([]byte("Authorization: Bearer "+key), 500)
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		if status < 100 || status > 599 {
			return
		}
		t.Setenv("SAGEBENCH_FUZZ_KEY", key)
		c, err := NewClient(Config{BaseURL: "http://127.0.0.1:1", APIKeyEnv: "SAGEBENCH_FUZZ_KEY", MaxResponseBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		c.rt = roundTrip{status: status, ctype: "application/json", body: body}
		ctx := context.Background()
		for _, res := range []Result{
			c.Chat(ctx, ChatRequest{Model: "m"}),
			c.Embed(ctx, EmbedRequest{Model: "e", Input: []string{"a", "b"}}),
			c.Retrieve(ctx, RetrieveRequest{Input: "q"}),
		} {
			checkFuzzResult(t, res, key)
		}
		if res := c.Embed(ctx, EmbedRequest{Model: "e", Input: []string{"a", "b"}}); res.Err == nil {
			if len(res.Embeddings) != 2 || res.Embeddings[0] == nil || res.Embeddings[1] == nil {
				t.Fatalf("embeddings accepted with holes: %v", res.Embeddings)
			}
		}
		if _, err := c.Models(ctx); err != nil && strings.Contains(err.Error(), key) {
			t.Fatalf("Models error leaks the key: %v", err)
		}
	})
}

func checkFuzzResult(t *testing.T, res Result, key string) {
	t.Helper()
	if res.Err == nil {
		return
	}
	if !slices.Contains(ErrClasses, res.ErrClass) {
		t.Fatalf("unknown class %q for %v", res.ErrClass, res.Err)
	}
	if strings.Contains(res.Err.Error(), key) {
		t.Fatalf("error leaks the key: %v", res.Err)
	}
}

// TestBufferedBytesBudget: non-streamed bodies held at once are bounded
// across concurrent calls (MaxBytesInFlight); a body that would pass the
// budget is too_large, and every byte is given back afterwards.
func TestBufferedBytesBudget(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := calls.Add(1) == 1
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"index":0,"embedding":[`+strings.Repeat("0.5,", 175_000)) // 700 KB
		w.(http.Flusher).Flush()
		if first {
			<-release
		}
		io.WriteString(w, `1]}]}`)
	}), Config{MaxBytesInFlight: 768 << 10, MaxResponseBytes: 8 << 20})
	done := make(chan Result)
	go func() { done <- c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"a"}}) }()
	for c.held.Load() < 400_000 { // the first body is being held
		select {
		case res := <-done:
			t.Fatalf("the first call ended early: %v", res.Err)
		default:
			runtime.Gosched()
		}
	}
	second := c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"b"}})
	close(release)
	first := <-done
	if first.Err != nil || second.ErrClass != ClassTooLarge {
		t.Fatalf("first: %v; second: class %q (%v); want ok and too_large", first.Err, second.ErrClass, second.Err)
	}
	if held := c.held.Load(); held != 0 {
		t.Fatalf("%d bytes still held after both calls, want all given back", held)
	}
}
