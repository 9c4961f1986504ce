package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

type harness struct {
	t   *testing.T
	g   *Gateway
	srv *httptest.Server
}

func newHarness(t *testing.T, cfg Config, engines map[string]Member) *harness {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sortedKeys(engines) {
		if err := g.Add(id, engines[id]); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		_ = g.Close()
	})
	return &harness{t: t, g: g, srv: srv}
}

type reply struct {
	status  int
	header  http.Header
	trailer http.Header // known once the body was read
	body    []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %d is not JSON: %q", r.status, r.body)
	}
	return m
}

func (h *harness) do(method, path, body string, hdr map[string]string) reply {
	h.t.Helper()
	return h.doCtx(context.Background(), method, path, body, hdr)
}

func (h *harness) doCtx(ctx context.Context, method, path, body string, hdr map[string]string) reply {
	h.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, h.srv.URL+path, strings.NewReader(body))
	if err != nil { // Error, not Fatal: doCtx also runs on other goroutines
		h.t.Errorf("building %s %s: %v", method, path, err)
		return reply{status: -1, body: []byte(err.Error())}
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json") // as every client of ours (the admin API requires it)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		return reply{status: -1, body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, trailer: resp.Trailer, body: b}
}

func chatBody(prompt string, maxTokens int, stream bool) string {
	return fmt.Sprintf(`{"model":"m-llm","messages":[{"role":"user","content":%q}],"max_tokens":%d,"stream":%v,"stream_options":{"include_usage":true}}`, prompt, maxTokens, stream)
}

// sseData splits an SSE body into its data payloads and event names.
func sseData(t *testing.T, body []byte) (data []string, events []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, e)
		}
	}
	return data, events
}

func TestChatNonStreamed(t *testing.T) {
	llm := newFakeLLM("e1", 4)
	h := newHarness(t, Config{}, map[string]Member{"e1": {LLM: llm}})
	r := h.do("POST", "/v1/chat/completions", chatBody("hi", 3, false), nil)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var got chatResponse
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "chat.completion" || got.Model != "m-llm" || len(got.Choices) != 1 {
		t.Fatalf("response %+v", got)
	}
	c := got.Choices[0]
	if c.Message.Content != "t0 t1 t2" || c.Message.Role != "assistant" || c.FinishReason != "length" {
		t.Errorf("choice %+v, want content %q finish length", c, "t0 t1 t2")
	}
	if got.Usage.CompletionTokens != 3 || got.Usage.TotalTokens != got.Usage.PromptTokens+3 {
		t.Errorf("usage %+v", got.Usage)
	}
	if r.header.Get("X-Engine-Id") != "e1" {
		t.Errorf("X-Engine-Id %q", r.header.Get("X-Engine-Id"))
	}
	if _, ok := protocol.ParseQueueWait(r.header.Get(protocol.HeaderQueueWait)); !ok {
		t.Errorf("%s %q: want whole µs", protocol.HeaderQueueWait, r.header.Get(protocol.HeaderQueueWait))
	}
}

func TestChatStreamed(t *testing.T) {
	llm := newFakeLLM("e1", 4)
	h := newHarness(t, Config{}, map[string]Member{"e1": {LLM: llm}})
	cases := []struct {
		name      string
		body      string
		wantUsage bool
	}{
		{"with usage", chatBody("hi", 4, true), true},
		{"without usage", `{"model":"m-llm","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":4,"stream":true}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/chat/completions", tc.body, nil)
			if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d type %q: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			data, _ := sseData(t, r.body)
			if data[len(data)-1] != "[DONE]" {
				t.Fatalf("last event %q, want [DONE]", data[len(data)-1])
			}
			var text strings.Builder
			var sawFinish, sawUsage bool
			for i, d := range data[:len(data)-1] {
				var c struct {
					Object  string `json:"object"`
					Choices []struct {
						Delta struct {
							Role    string  `json:"role"`
							Content *string `json:"content"`
						} `json:"delta"`
						FinishReason *string `json:"finish_reason"`
					} `json:"choices"`
					Usage *usageOut `json:"usage"`
				}
				if err := json.Unmarshal([]byte(d), &c); err != nil {
					t.Fatalf("chunk %d not JSON: %q", i, d)
				}
				if c.Object != "chat.completion.chunk" {
					t.Fatalf("chunk %d object %q", i, c.Object)
				}
				if c.Usage != nil {
					sawUsage = true
					if len(c.Choices) != 0 || c.Usage.CompletionTokens != 4 {
						t.Errorf("usage chunk %q", d)
					}
					continue
				}
				ch := c.Choices[0]
				if i == 0 && ch.Delta.Role != "assistant" {
					t.Errorf("first chunk has no assistant role: %q", d)
				}
				if ch.FinishReason != nil {
					sawFinish = *ch.FinishReason == "length"
					continue
				}
				text.WriteString(*ch.Delta.Content)
			}
			if text.String() != "t0 t1 t2 t3" || !sawFinish || sawUsage != tc.wantUsage {
				t.Errorf("text %q finish %v usage %v (want usage %v)", text.String(), sawFinish, sawUsage, tc.wantUsage)
			}
		})
	}
}

func TestEmbeddingsAndModels(t *testing.T) {
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 8}
	h := newHarness(t, Config{}, map[string]Member{"emb": {Embedder: emb}, "llm": {LLM: newFakeLLM("llm", 1)}})
	for _, input := range []string{`"abc"`, `["a","bbb"]`} {
		r := h.do("POST", "/v1/embeddings", `{"model":"m-emb","input":`+input+`}`, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", input, r.status, r.body)
		}
		if _, ok := protocol.ParseQueueWait(r.header.Get(protocol.HeaderQueueWait)); !ok {
			t.Errorf("%s: %s %q: want whole µs", input, protocol.HeaderQueueWait, r.header.Get(protocol.HeaderQueueWait))
		}
		var got struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		_ = json.Unmarshal(r.body, &got)
		var want []string
		_ = json.Unmarshal([]byte(input), &want)
		if len(want) == 0 {
			want = []string{"abc"}
		}
		for i, d := range got.Data {
			if d.Index != i || d.Embedding[0] != float32(len(want[i])) {
				t.Errorf("%s: data[%d] = %+v", input, i, d)
			}
		}
	}
	r := h.do("POST", "/v1/embeddings", `{"input":"abc","encoding_format":"base64"}`, nil)
	if !strings.Contains(string(r.body), `"embedding":"AABAQAAAAAA="`) {
		t.Errorf("base64 embedding: %s", r.body)
	}
	r = h.do("GET", "/v1/models", "", nil)
	if !strings.Contains(string(r.body), `"id":"m-emb"`) || !strings.Contains(string(r.body), `"id":"m-llm"`) {
		t.Errorf("models: %s", r.body)
	}
	if r := h.do("GET", "/health", "", nil); r.status != 200 {
		t.Errorf("health %d", r.status)
	}
}

func TestBadInput(t *testing.T) {
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 8}
	h := newHarness(t, Config{MaxBodyBytes: 4096, MaxTokens: 100}, map[string]Member{"llm": {LLM: newFakeLLM("llm", 4)}, "emb": {Embedder: emb}})
	chat := "/v1/chat/completions"
	msgs := `"messages":[{"role":"user","content":"x"}]`
	cases := []struct {
		name, path, body string
		hdr              map[string]string
		status           int
		mention          string
	}{
		{"malformed JSON", chat, `{"model":`, nil, 400, "malformed JSON"},
		{"empty body", chat, ``, nil, 400, "empty"},
		{"trailing data", chat, `{` + msgs + `} {}`, nil, 400, "after the JSON"},
		{"messages wrong type", chat, `{"messages":"hi"}`, nil, 400, "messages"},
		{"max_tokens wrong type", chat, `{` + msgs + `,"max_tokens":"ten"}`, nil, 400, "max_tokens"},
		{"empty messages", chat, `{"messages":[]}`, nil, 400, "messages"},
		{"missing role", chat, `{"messages":[{"content":"x"}]}`, nil, 400, "messages[0].role"},
		{"content object", chat, `{"messages":[{"role":"user","content":{"a":1}}]}`, nil, 400, "messages[0].content"},
		{"max_tokens zero", chat, `{` + msgs + `,"max_tokens":0}`, nil, 400, "max_tokens"},
		{"max_tokens negative", chat, `{` + msgs + `,"max_tokens":-5}`, nil, 400, "max_tokens"},
		{"max_tokens huge", chat, `{` + msgs + `,"max_tokens":100000000}`, nil, 400, "max_tokens"},
		{"max_completion_tokens zero", chat, `{` + msgs + `,"max_completion_tokens":0}`, nil, 400, "max_completion_tokens"},
		{"unknown model", chat, `{"model":"nope",` + msgs + `}`, nil, 404, "nope"},
		{"embedding model for chat", chat, `{"model":"m-emb",` + msgs + `}`, nil, 400, "model"},
		{"oversized body", chat, `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, nil, 413, "max_body_bytes"},
		{"unknown priority", chat, `{` + msgs + `}`, map[string]string{"X-Request-Priority": "urgent"}, 400, "X-Request-Priority"},
		{"negative deadline", chat, `{` + msgs + `}`, map[string]string{"X-SLO-Deadline-Ms": "-1"}, 400, "X-SLO-Deadline-Ms"},
		{"garbage deadline", chat, `{` + msgs + `}`, map[string]string{"X-SLO-Deadline-Ms": "soon"}, 400, "X-SLO-Deadline-Ms"},
		{"embeddings missing input", "/v1/embeddings", `{}`, nil, 400, "input"},
		{"embeddings empty list", "/v1/embeddings", `{"input":[]}`, nil, 400, "input"},
		{"embeddings empty string", "/v1/embeddings", `{"input":["a",""]}`, nil, 400, "input[1]"},
		{"embeddings numbers", "/v1/embeddings", `{"input":[1,2]}`, nil, 400, "input"},
		{"embeddings bad format", "/v1/embeddings", `{"input":"a","encoding_format":"hex"}`, nil, 400, "encoding_format"},
		{"retrieve without index", "/v1/retrieve", `{"input":"a"}`, nil, 404, "index"},
		{"unknown path", "/v1/nope", ``, nil, 404, "/v1/nope"},
		{"wrong method", "/v1/chat/completions", ``, nil, 405, "GET"},
		{"admin bad policy", "/admin/policy", `{"policy":"random"}`, nil, 400, "policy"},
		{"admin policy wrong type", "/admin/policy", `{"policy":7}`, nil, 400, "policy"},
		{"admin add engine bad kind", "/admin/engines", `{"id":"x","kind":"gpu","profile":"p"}`, nil, 400, "kind"},
		{"admin add engine profile and url", "/admin/engines", `{"id":"x","kind":"llm","profile":"p","url":"http://a"}`, nil, 400, "url"},
		{"admin add engine bad id", "/admin/engines", `{"id":"a b","kind":"llm","profile":"p"}`, nil, 400, "id"},
		{"admin drain unknown", "/admin/engines/ghost/drain", ``, nil, 404, "ghost"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := "POST"
			if tc.name == "wrong method" {
				method = "GET"
			}
			r := h.do(method, tc.path, tc.body, tc.hdr)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			e, ok := r.json(t)["error"].(map[string]any)
			if !ok || e["type"] == "" || e["code"] == "" {
				t.Fatalf("error not in OpenAI shape: %s", r.body)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.mention) {
				t.Errorf("message %q does not mention %q", msg, tc.mention)
			}
		})
	}
	if r := h.do("POST", chat, chatBody("still alive", 2, false), nil); r.status != 200 {
		t.Fatalf("server stopped serving after bad input: %d %s", r.status, r.body)
	}
}

// waitFor polls cond every millisecond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) queued(kind engine.Kind) int {
	for _, s := range h.g.snapshot() {
		if s.Kind == string(kind) {
			return s.Queued
		}
	}
	return -1
}

// TestNonUTF8TenantIsRejected: header values may carry bytes that are not
// UTF-8; such a tenant id gets a 400 naming the header (it used to panic
// the handler in the Prometheus client and drop the connection).
func TestNonUTF8TenantIsRejected(t *testing.T) {
	h := newHarness(t, Config{}, map[string]Member{"e1": {LLM: newFakeLLM("e1", 4)}})
	for _, tenant := range []string{"caf\xe9", "\xff\xfe"} {
		r := h.do("POST", "/v1/embeddings", `{"input":"x"}`, map[string]string{"X-Tenant-Id": tenant})
		if r.status != 400 || !strings.Contains(string(r.body), "X-Tenant-Id") {
			t.Errorf("embeddings, tenant %q: %d %s", tenant, r.status, r.body)
		}
		r = h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), map[string]string{"X-Tenant-Id": tenant})
		if r.status != 400 || !strings.Contains(string(r.body), "X-Tenant-Id") {
			t.Errorf("chat, tenant %q: %d %s", tenant, r.status, r.body)
		}
	}
	if r := h.do("POST", "/v1/chat/completions", chatBody("x", 1, false), map[string]string{"X-Tenant-Id": "café"}); r.status != 200 {
		t.Errorf("UTF-8 tenant: %d %s", r.status, r.body)
	}
}
