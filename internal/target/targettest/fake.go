// Package targettest provides the one small OpenAI-compatible server the
// harness's tests use: it streams chat completions as server-sent events,
// answers embeddings, exposes /admin/policy, counts the requests in flight
// per endpoint, and can misbehave on demand (garbage bodies, hangs, 500s)
// so that tests can check that a broken target ends as error records.
// NewRAG adds what Q1 needs: deterministic embeddings of the synthetic
// corpus and POST /v1/retrieve (exact search), with chosen retrieves
// failing or hanging. NewHostile serves hostile answers. Every server
// binds 127.0.0.1 on a free port.
package targettest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Behaviours of a Server.
const (
	OK      = "ok"      // well-formed answers
	Garbage = "garbage" // 200 with a body that is not JSON / not SSE
	Hang    = "hang"    // accept the request and never answer (until the client gives up)
	Fail    = "fail"    // HTTP 500
	Reject  = "reject"  // HTTP 404 model_not_found, as a target that does not serve the model
)

// Server is a fake OpenAI-compatible target.
type Server struct {
	*httptest.Server
	Mode       string        // one of the behaviours (default OK)
	Tokens     int           // tokens per chat completion (default 4)
	TokenDelay time.Duration // between tokens (default 1ms)
	NoAdmin    bool          // answer 404 on /admin/policy
	// Models is what GET /v1/models lists (nil: DefaultModels). The
	// server answers any model whatever it lists.
	Models []string

	closing chan struct{}
	once    sync.Once

	rag *ragState // nil: not a RAG target

	mu       sync.Mutex
	policy   string
	policies []string // every policy set, in order
	headers  []http.Header
	inFlight map[string]int // by endpoint: "chat", "embeddings", "retrieve"
	peak     map[string]int
	count    map[string]int
}

// NewServer starts a server; Close it when done.
func NewServer(mode string) *Server {
	return start(newServer(mode))
}

func newServer(mode string) *Server {
	return &Server{Mode: mode, Tokens: 4, TokenDelay: time.Millisecond, policy: "fifo", closing: make(chan struct{}),
		inFlight: map[string]int{}, peak: map[string]int{}, count: map[string]int{}}
}

func start(s *Server) *Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("POST /v1/chat/completions", s.track("chat", s.chat))
	mux.HandleFunc("POST /v1/embeddings", s.track("embeddings", s.embed))
	if s.rag != nil && !s.rag.opts.NoRetrieve {
		mux.HandleFunc("POST /v1/retrieve", s.track("retrieve", s.retrieve))
	}
	mux.HandleFunc("/admin/policy", s.admin)
	s.Server = httptest.NewServer(mux)
	return s
}

// Peak returns the most requests of endpoint ("chat", "embeddings",
// "retrieve") that were in flight at once.
func (s *Server) Peak(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak[endpoint]
}

// Count returns how many requests endpoint has received.
func (s *Server) Count(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[endpoint]
}

func (s *Server) track(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.count[name]++
		s.inFlight[name]++
		s.peak[name] = max(s.peak[name], s.inFlight[name])
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight[name]--
			s.mu.Unlock()
		}()
		h(w, r)
	}
}

// Close releases hanging handlers, drops client connections and stops
// the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.CloseClientConnections()
	s.Server.Close()
}

// Policies returns the policies set through the admin API, in order.
func (s *Server) Policies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.policies...)
}

// Headers returns the request headers of the traffic seen so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// DefaultModels are the ids a Server lists by default: its own and the
// models the workloads ask for by default, so that a run's model check
// passes against it.
func DefaultModels() []string {
	return []string{"fake-llm", "fake-embed", "m", "meta-llama/Llama-3.1-8B-Instruct", "BAAI/bge-small-en-v1.5"}
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	ids := s.Models
	if ids == nil {
		ids = DefaultModels()
	}
	type model struct {
		ID     string `json:"id"`
		Object string `json:"object"`
	}
	data := make([]model, len(ids))
	for i, id := range ids {
		data[i] = model{ID: id, Object: "model"}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	if s.NoAdmin {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodPost {
		var b struct{ Policy string }
		if json.NewDecoder(r.Body).Decode(&b) != nil || b.Policy == "" {
			http.Error(w, `{"error":"bad policy"}`, http.StatusBadRequest)
			return
		}
		s.policy = b.Policy
		s.policies = append(s.policies, b.Policy)
	}
	fmt.Fprintf(w, `{"policy":%q}`, s.policy)
}

// misbehave answers per Mode and reports whether it did.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	switch s.Mode {
	case Garbage:
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("<html>not json at all"))
	case Hang:
		io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	case Fail:
		http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
	case Reject:
		io.Copy(io.Discard, r.Body)
		http.Error(w, `{"error":{"message":"The model does not exist.","code":"model_not_found"}}`, http.StatusNotFound)
	default:
		return false
	}
	return true
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if s.misbehave(w, r) {
		return
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	w.Header().Set("X-Engine-Id", "fake-0")
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`, s.Tokens, s.Tokens+3)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	for i := range s.Tokens {
		time.Sleep(s.TokenDelay)
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		if fl != nil {
			fl.Flush()
		}
	}
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", s.Tokens, s.Tokens+3)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	if s.misbehave(w, r) {
		return
	}
	if s.rag != nil {
		s.ragEmbed(w, r)
		return
	}
	w.Header().Set("X-Engine-Id", "fake-embed-0")
	writeEmbeddings(w, r.Body)
}

// writeEmbeddings answers an embeddings request read from body: one
// 3-dimensional vector per input.
func writeEmbeddings(w http.ResponseWriter, body io.Reader) {
	var req struct {
		Input []string `json:"input"`
	}
	json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&req)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"object":"list","data":[`)
	for i := range req.Input {
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, `{"object":"embedding","index":%d,"embedding":[0.1,0.2,0.3]}`, i)
	}
	fmt.Fprintf(w, `],"model":"fake-embed","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, len(req.Input), len(req.Input))
}
