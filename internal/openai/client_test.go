package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newTestClient(t *testing.T, h http.Handler, cfg Config) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, srv
}

func writeChunk(w http.ResponseWriter, s string) {
	fmt.Fprintf(w, "data: %s\n\n", s)
	w.(http.Flusher).Flush()
}

func tokenChunk(s string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"delta": map[string]any{"content": s}}}})
	return string(b)
}

// streamHandler streams tokens, then usage, then [DONE].
func streamHandler(tokens []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Engine-Id", "eng-1")
		w.Header().Set("X-Sagebench-Retries", "1")
		writeChunk(w, `{"choices":[{"delta":{"role":"assistant"}}]}`)
		for _, tok := range tokens {
			writeChunk(w, tokenChunk(tok))
		}
		writeChunk(w, `{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}`)
		writeChunk(w, "[DONE]")
	}
}

func TestChatStream(t *testing.T) {
	var gotBody map[string]any
	var gotHeader http.Header
	h := func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Clone()
		_ = json.NewDecoder(r.Body).Decode(&gotBody)
		streamHandler([]string{"Hel", "lo", "!"})(w, r)
	}
	c, _ := newTestClient(t, http.HandlerFunc(h), Config{})
	var onToken []string
	res := c.Chat(context.Background(), ChatRequest{
		Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 3,
		Stream: true, IncludeUsage: true, KeepText: true, Header: http.Header{"X-Tenant-Id": {"t1"}},
		OnToken: func(_ time.Time, s string) { onToken = append(onToken, s) },
	})
	if res.Err != nil {
		t.Fatalf("err = %v (%s)", res.Err, res.ErrClass)
	}
	if res.Text != "Hello!" || len(res.Tokens) != 3 || strings.Join(onToken, "") != "Hello!" {
		t.Errorf("text %q, %d tokens, OnToken %q", res.Text, len(res.Tokens), onToken)
	}
	if res.PromptTokens != 7 || res.CompletionTokens != 3 || res.Engine != "eng-1" || res.Retries != 1 || res.Status != 200 {
		t.Errorf("usage %d/%d engine %q retries %d status %d", res.PromptTokens, res.CompletionTokens, res.Engine, res.Retries, res.Status)
	}
	order := []time.Time{res.Start, res.Sent, res.FirstByte, res.FirstToken, res.Tokens[2], res.End}
	for i := 1; i < len(order); i++ {
		if order[i].Before(order[i-1]) || order[i].IsZero() {
			t.Errorf("timing %d out of order or zero: %v", i, order)
		}
	}
	if gotHeader.Get("X-Tenant-Id") != "t1" || gotHeader.Get("Accept") != "text/event-stream" {
		t.Errorf("headers not sent: %v", gotHeader)
	}
	if so, _ := gotBody["stream_options"].(map[string]any); so["include_usage"] != true || gotBody["max_tokens"] != 3.0 {
		t.Errorf("body = %v", gotBody)
	}
}

func TestChatNonStream(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"yes"}}],"usage":{"prompt_tokens":2,"completion_tokens":1}}`)
	}
	c, _ := newTestClient(t, http.HandlerFunc(h), Config{})
	for _, stream := range []bool{false, true} { // a target may ignore "stream": true
		res := c.Chat(context.Background(), ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "?"}}, Stream: stream, KeepText: true})
		if res.Err != nil || res.Text != "yes" || res.CompletionTokens != 1 || res.PromptTokens != 2 {
			t.Fatalf("stream=%v: res = %+v", stream, res)
		}
		if res := c.Chat(context.Background(), ChatRequest{Model: "m", Stream: stream}); res.Err != nil || res.Text != "" {
			t.Errorf("stream=%v without KeepText: text %q, err %v; want no text kept", stream, res.Text, res.Err)
		}
	}
}

// hostile is a target misbehaving in one way.
type hostile struct {
	name   string
	stream bool
	cfg    Config
	h      http.HandlerFunc
	class  string
}

// hold keeps a request open until the client goes away or d passes (the
// server only notices a closed client once the body was read).
func hold(r *http.Request, d time.Duration) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(d):
	}
}

func hijackClose(w http.ResponseWriter, prefix string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n" + prefix)
	buf.Flush()
	conn.Close()
}

var hostiles = []hostile{
	{"no DONE", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, tokenChunk("a"))
	}, ClassTruncated},
	{"cut mid-line", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, tokenChunk("a"))
		io.WriteString(w, `data: {"choi`)
	}, ClassTruncated},
	{"connection dropped mid-body", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		hijackClose(w, "data: "+tokenChunk("a")+"\n\n")
	}, ClassTruncated},
	{"garbage JSON", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, `{"choices":[{"delta":{"content":`)
		writeChunk(w, "[DONE]")
	}, ClassMalformed},
	{"wrong JSON types", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, `{"choices":{"delta":7}}`)
	}, ClassMalformed},
	{"error event", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: error\ndata: {\"message\":\"engine died\"}\n\n")
	}, ClassStreamError},
	{"error object", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, tokenChunk("a"))
		writeChunk(w, `{"error":{"message":"overloaded","code":503}}`)
	}, ClassStreamError},
	{"oversize line", true, Config{MaxLineBytes: 1024}, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, tokenChunk(strings.Repeat("x", 4096)))
	}, ClassTooLarge},
	{"huge stream", true, Config{MaxResponseBytes: 1 << 20}, func(w http.ResponseWriter, r *http.Request) {
		for range 100000 {
			if _, err := io.WriteString(w, "data: "+tokenChunk("x")+"\n\n"); err != nil {
				return
			}
		}
	}, ClassTooLarge},
	{"huge body", false, Config{MaxResponseBytes: 1 << 20}, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		for range 4096 {
			if _, err := io.WriteString(w, strings.Repeat("y", 1024)); err != nil {
				return
			}
		}
	}, ClassTooLarge},
	{"garbage body", false, Config{}, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>not json</html>")
	}, ClassMalformed},
	{"no choices", false, Config{}, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"chat.completion"}`)
	}, ClassMalformed},
	{"429", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"quota"}`, http.StatusTooManyRequests)
	}, ClassHTTP429},
	{"404", false, Config{}, http.NotFound, ClassHTTP4xx},
	{"500", true, Config{}, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "\x00\x01binary junk\xff", http.StatusInternalServerError)
	}, ClassHTTP5xx},
	{"slow-loris", true, Config{Timeout: 300 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := io.WriteString(w, ":"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}, ClassTimeout},
	{"no headers", true, Config{FirstByteTimeout: 100 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		hold(r, 3*time.Second)
	}, ClassTimeout},
}

func TestChatHostileTargets(t *testing.T) {
	for _, tc := range hostiles {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, tc.h, tc.cfg)
			res := c.Chat(context.Background(), ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "x"}}, Stream: tc.stream})
			if res.ErrClass != tc.class || res.Err == nil {
				t.Fatalf("class = %q (err %v), want %q", res.ErrClass, res.Err, tc.class)
			}
			if res.End.IsZero() || res.End.Before(res.Start) {
				t.Errorf("End %v not after Start %v", res.End, res.Start)
			}
		})
	}
}

func TestChatConnectAndCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := NewClient(Config{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Chat(context.Background(), ChatRequest{Model: "m"}); res.ErrClass != ClassConnect {
		t.Errorf("closed port: class %q (%v), want connect", res.ErrClass, res.Err)
	}

	c2, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hold(r, 3*time.Second)
	}), Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if res := c2.Chat(ctx, ChatRequest{Model: "m", Stream: true}); res.ErrClass != ClassCanceled {
		t.Errorf("cancelled: class %q (%v), want canceled", res.ErrClass, res.Err)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	const key = "sk-test-SECRET-1234567890"
	t.Setenv("SAGEBENCH_TEST_KEY", key)
	var seen atomic.Value
	echo := func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/v1/chat/completions":
			http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
		case "/v1/embeddings":
			io.WriteString(w, "not json, your key is "+r.Header.Get("Authorization"))
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: error\ndata: "+r.Header.Get("Authorization")+"\n\n")
		}
	}
	c, _ := newTestClient(t, http.HandlerFunc(echo), Config{APIKeyEnv: "SAGEBENCH_TEST_KEY"})
	results := []Result{
		c.Chat(context.Background(), ChatRequest{Model: "m"}),
		c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"a"}}),
		c.Retrieve(context.Background(), RetrieveRequest{Input: "q"}),
	}
	if seen.Load() != "Bearer "+key {
		t.Fatalf("server saw Authorization %q", seen.Load())
	}
	for i, res := range results {
		if res.Err == nil {
			t.Fatalf("result %d: no error", i)
		}
		if text := fmt.Sprintf("%v %+v", res.Err, res); strings.Contains(text, key) {
			t.Errorf("result %d leaks the key: %s", i, text)
		}
	}
	if _, err := c.Models(context.Background()); err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("Models error %v", err)
	}
}

func TestEmbedRetrieveModels(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":4}}`)
	})
	mux.HandleFunc("POST /v1/retrieve", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			TopK int `json:"top_k"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		fmt.Fprintf(w, `{"data":[{"id":5,"score":0.9,"text":"five"}],"k":%d}`, in.TopK)
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"a"},{"id":"b"}]}`)
	})
	c, _ := newTestClient(t, mux, Config{BaseURL: "ignored"})
	res := c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"x", "y"}})
	if res.Err != nil || len(res.Embeddings) != 2 || res.Embeddings[0][1] != 2 || res.Embeddings[1][0] != 3 || res.PromptTokens != 4 {
		t.Errorf("embed = %+v", res)
	}
	res = c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"x"}})
	if res.ErrClass != ClassMalformed {
		t.Errorf("embed count mismatch: class %q", res.ErrClass)
	}
	res = c.Retrieve(context.Background(), RetrieveRequest{Embedding: []float32{1, 0}, TopK: 3})
	if res.Err != nil || len(res.Docs) != 1 || res.Docs[0] != (Doc{ID: 5, Score: 0.9, Text: "five"}) {
		t.Errorf("retrieve = %+v", res)
	}
	if res := c.Retrieve(context.Background(), RetrieveRequest{}); res.ErrClass != ClassMalformed {
		t.Errorf("empty retrieve: class %q", res.ErrClass)
	}
	models, err := c.Models(context.Background())
	if err != nil || strings.Join(models, ",") != "a,b" {
		t.Errorf("models = %v, %v", models, err)
	}
}

func TestConnectionReuse(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(streamHandler([]string{"a"}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if res := c.Chat(context.Background(), ChatRequest{Model: "m", Stream: true}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 sequential requests used %d connections, want 1", n)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{"ok", Config{BaseURL: "http://127.0.0.1:1"}, ""},
		{"missing url", Config{}, "target.base_url is missing"},
		{"not http", Config{BaseURL: "ftp://x"}, "target.base_url"},
		{"credentials in url", Config{BaseURL: "http://u:p@127.0.0.1"}, "must not carry credentials"},
		{"key instead of env name", Config{BaseURL: "http://127.0.0.1", APIKeyEnv: "sk-abc"}, "target.api_key_env"},
		{"negative timeout", Config{BaseURL: "http://127.0.0.1", Timeout: -1}, "target.timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := NewClient(Config{BaseURL: "http://127.0.0.1", APIKeyEnv: "SAGEBENCH_SURELY_UNSET_VAR"}); err == nil || !strings.Contains(err.Error(), "SAGEBENCH_SURELY_UNSET_VAR") {
		t.Errorf("unset key env: %v", err)
	}
}

func newBenchServer(b *testing.B, h http.Handler) string {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv.URL
}

// TestEmbedHostileTargets: every answer that does not give one non-empty
// vector per input is malformed, never an OK result with a hole in it.
func TestEmbedHostileTargets(t *testing.T) {
	tests := []struct{ name, body string }{
		{"repeated index with null vectors", `{"data":[{"index":0,"embedding":null},{"index":0,"embedding":null}]}`},
		{"repeated index after a null vector", `{"data":[{"index":0,"embedding":null},{"index":0,"embedding":[1]}]}`},
		{"empty vector", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1]}]}`},
		{"missing vector", `{"data":[{"index":0},{"index":1,"embedding":[1]}]}`},
		{"index out of range", `{"data":[{"index":2,"embedding":[1]},{"index":1,"embedding":[1]}]}`},
		{"negative index", `{"data":[{"index":-1,"embedding":[1]},{"index":1,"embedding":[1]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, tc.body)
			}), Config{})
			res := c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"x", "y"}})
			if res.ErrClass != ClassMalformed || res.Err == nil || res.Embeddings != nil {
				t.Fatalf("class %q, err %v, %d vectors; want %q and no vectors", res.ErrClass, res.Err, len(res.Embeddings), ClassMalformed)
			}
		})
	}
}

// TestUsageCountsBounded: a count the target cannot mean (negative, or
// beyond any request) is not reported, never recorded as it came; a
// stream then counts the tokens it timed.
func TestUsageCountsBounded(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeChunk(w, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`)
		writeChunk(w, `{"choices":[{"index":0,"delta":{"content":"b"}}]}`)
		writeChunk(w, `{"choices":[],"usage":{"prompt_tokens":-7,"completion_tokens":99999999999}}`)
		writeChunk(w, `[DONE]`)
	}
	c, _ := newTestClient(t, http.HandlerFunc(h), Config{})
	res := c.Chat(context.Background(), ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}, Stream: true, IncludeUsage: true})
	if res.Err != nil || res.PromptTokens != 0 || res.CompletionTokens != 2 {
		t.Fatalf("err %v, usage %d/%d; want 0 (not reported) and the 2 tokens timed", res.Err, res.PromptTokens, res.CompletionTokens)
	}
}
