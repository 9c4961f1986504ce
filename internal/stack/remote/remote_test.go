package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

func server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "%s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

func tokenEvent(s string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}`
}

func collect(t *testing.T, l *LLM) ([]string, engine.Usage, error) {
	t.Helper()
	st, err := l.Generate(t.Context(), engine.ChatRequest{Prompt: "p", MaxTokens: 3})
	if err != nil {
		return nil, engine.Usage{}, err
	}
	defer st.Close()
	var toks []string
	for {
		tok, err := st.Recv(t.Context())
		if errors.Is(err, io.EOF) {
			return toks, st.Usage(), nil
		}
		if err != nil {
			return toks, st.Usage(), err
		}
		toks = append(toks, tok.Text)
	}
}

func TestLLMStream(t *testing.T) {
	var gotBody string
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		sse(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			tokenEvent("a"), ": comment", tokenEvent("b"), tokenEvent("c"),
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
			`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`,
			"data: [DONE]")
	})
	l, err := NewLLM(Config{ID: "r", URL: s.URL + "/v1", Model: "m", Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	toks, u, err := collect(t, l)
	if err != nil || strings.Join(toks, "") != "abc" {
		t.Fatalf("tokens %v err %v", toks, err)
	}
	if u != (engine.Usage{PromptTokens: 7, CompletionTokens: 3, CachedTokens: 4}) {
		t.Errorf("usage %+v", u)
	}
	for _, want := range []string{`"model":"m"`, `"stream":true`, `"include_usage":true`, `"max_tokens":3`} {
		if !strings.Contains(gotBody, want) {
			t.Errorf("request body %s lacks %s", gotBody, want)
		}
	}
	if ld := l.Load(); ld.Slots != 2 || ld.Running != 0 {
		t.Errorf("load after close %+v", ld)
	}
}

func TestLLMFailures(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	cases := []struct {
		name    string
		url     string
		handler http.HandlerFunc
		want    error // errors.Is target; nil = any error
		mention string
	}{
		{name: "connection refused", url: deadURL, want: engine.ErrClosed},
		{name: "429 is overload", handler: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
		}, want: engine.ErrOverloaded, mention: "slow down"},
		{name: "500 is an error", handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "kaput", 500) }, mention: "kaput"},
		{name: "truncated stream", handler: func(w http.ResponseWriter, _ *http.Request) { sse(w, tokenEvent("a")) }, want: engine.ErrClosed, mention: "[DONE]"},
		{name: "error event", handler: func(w http.ResponseWriter, _ *http.Request) {
			sse(w, tokenEvent("a"), `event: error`+"\n"+`data: {"error":{"message":"engine x failed"}}`)
		}, mention: "engine x failed"},
		{name: "garbage chunk", handler: func(w http.ResponseWriter, _ *http.Request) { sse(w, "data: {not json") }, mention: "malformed"},
		{name: "hijacked mid-stream", handler: func(w http.ResponseWriter, _ *http.Request) {
			sse(w, tokenEvent("a"))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}, want: engine.ErrClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if tc.handler != nil {
				url = server(t, tc.handler).URL
			}
			l, err := NewLLM(Config{ID: "r", URL: url, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = collect(t, l)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("error %v; want %v mentioning %q", err, tc.want, tc.mention)
			}
			if l.Load().Running != 0 {
				t.Error("slot leaked")
			}
		})
	}
}

func TestEmbedderAndHealth(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			w.WriteHeader(200)
		case "/v1/embeddings":
			fmt.Fprint(w, `{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":5}}`)
		}
	})
	e, err := NewEmbedder(Config{ID: "e", URL: s.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	vecs, u, err := e.Embed(t.Context(), []string{"a", "b"})
	if err != nil || vecs[0][0] != 1 || vecs[1][0] != 3 || u.PromptTokens != 5 {
		t.Fatalf("vecs %v usage %+v err %v", vecs, u, err)
	}
	raw, u, err := e.EmbedJSON(t.Context(), []string{"a", "b"})
	if err != nil || string(raw[0]) != "[1,2]" || string(raw[1]) != "[3,4]" || u.PromptTokens != 5 {
		t.Fatalf("EmbedJSON %q usage %+v err %v", raw, u, err)
	}
	if err := e.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Embed(t.Context(), []string{"a", "b", "c"}); err == nil {
		t.Fatal("a response missing an input was accepted")
	}
	if _, _, err := e.EmbedJSON(t.Context(), []string{"a", "b", "c"}); err == nil {
		t.Fatal("EmbedJSON accepted a response missing an input")
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{{URL: "http://x", Model: "m"}, {ID: "a", URL: "ftp://x", Model: "m"}, {ID: "a", URL: "http://x"}, {ID: "a", URL: "http://x", Model: "m", Slots: -1}} {
		if _, err := NewLLM(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
