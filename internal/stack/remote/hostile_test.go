package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// canned answers every request with one response, without a socket.
type canned struct {
	status int
	ctype  string
	body   []byte
}

func (c canned) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: c.status, Status: http.StatusText(c.status), Header: http.Header{"Content-Type": {c.ctype}},
		Body: io.NopCloser(bytes.NewReader(c.body)), Request: r}, nil
}

// FuzzRemoteDecoding feeds one engine answer to the remote embedder and
// to the remote LLM's stream: no panic, no endless loop, a success is
// well formed, an error never carries the API key.
func FuzzRemoteDecoding(f *testing.F) {
	const key = "sk-remote-KEY-424242"
	for _, s := range []string{
		`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3]}],"usage":{"prompt_tokens":3}}`,
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
		"event: error\ndata: {\"error\":{\"message\":\"Bearer " + key + "\"}}\n\n",
		`{"data":[{"index":-1,"embedding":[1]}]}`,
		"data: " + strings.Repeat("[", 10000) + "\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n: ping\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\r\n\r\ndata: [DONE]\n\n",
	} {
		f.Add(200, []byte(s))
	}
	f.Add(400, []byte(`{"error":{"message":"This model's maximum context length is 8192 tokens"}}`))
	f.Add(500, []byte("Authorization: Bearer "+key))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		cfg := Config{ID: "r", URL: "http://127.0.0.1:1", Model: "m", APIKey: key,
			Client: &http.Client{Transport: canned{status: status, ctype: "text/event-stream", body: body}}}
		emb, err := NewEmbedder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		vecs, _, err := emb.Embed(context.Background(), []string{"a", "b"})
		switch {
		case err != nil && strings.Contains(err.Error(), key):
			t.Fatalf("embed error leaks the key: %v", err)
		case err == nil && (len(vecs) != 2 || vecs[0] == nil || vecs[1] == nil):
			t.Fatalf("embeddings accepted with holes: %v", vecs)
		}
		raw, _, rerr := emb.EmbedJSON(context.Background(), []string{"a", "b"})
		switch {
		case (rerr == nil) != (err == nil):
			t.Fatalf("Embed: %v; EmbedJSON: %v", err, rerr)
		case rerr != nil && strings.Contains(rerr.Error(), key):
			t.Fatalf("EmbedJSON error leaks the key: %v", rerr)
		case rerr == nil && (len(raw) != 2 || raw[0] == nil || raw[1] == nil):
			t.Fatalf("EmbedJSON accepted holes: %q", raw)
		}
		llm, err := NewLLM(cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, err := llm.Generate(context.Background(), engine.ChatRequest{Model: "m", Prompt: "x", MaxTokens: 4})
		for i := 0; err == nil; i++ {
			if i > len(body)+1 {
				t.Fatalf("more tokens than bytes: an endless stream")
			}
			_, err = st.Recv(context.Background())
		}
		if st != nil {
			st.Close()
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Fatalf("stream error leaks the key: %v", err)
		}
		recvOnly, errA := drainStream(t, llm, len(body), false)
		withTry, errB := drainStream(t, llm, len(body), true)
		if strings.Join(recvOnly, "\x00") != strings.Join(withTry, "\x00") || fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("Recv read %q (%v); with TryRecv %q (%v)", recvOnly, errA, withTry, errB)
		}
	})
}

// drainStream reads one completion to its end with Recv, or draining
// TryRecv before each Recv; it returns the tokens and the final error.
func drainStream(t *testing.T, llm *LLM, limit int, try bool) ([]string, error) {
	st, err := llm.Generate(context.Background(), engine.ChatRequest{Model: "m", Prompt: "x", MaxTokens: 4})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var got []string
	for len(got) <= limit+1 {
		for try {
			tok, ok, err := st.(*stream).TryRecv()
			if !ok {
				break
			}
			if err != nil {
				return got, err
			}
			got = append(got, tok.Text)
		}
		tok, err := st.Recv(context.Background())
		if err != nil {
			return got, err
		}
		got = append(got, tok.Text)
	}
	t.Fatalf("more tokens than bytes: an endless stream")
	return nil, nil
}

// TestRemoteNoRedirect: the API key never follows a redirect.
func TestRemoteNoRedirect(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
	defer thief.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	emb, _ := NewEmbedder(Config{ID: "r", URL: srv.URL, Model: "m", APIKey: "sk-x"})
	if _, _, err := emb.Embed(context.Background(), []string{"a"}); err == nil {
		t.Fatal("Embed followed the redirect")
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// TestRemoteContextLengthIsTooLarge: an engine's "prompt too long" 400 is
// engine.ErrTooLarge (the client's error), not an engine failure.
func TestRemoteContextLengthIsTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"}}`, 400)
	}))
	defer srv.Close()
	llm, _ := NewLLM(Config{ID: "r", URL: srv.URL, Model: "m"})
	if _, err := llm.Generate(context.Background(), engine.ChatRequest{Model: "m", Prompt: "x", MaxTokens: 4}); !errors.Is(err, engine.ErrTooLarge) {
		t.Fatalf("Generate = %v, want ErrTooLarge", err)
	}
}
