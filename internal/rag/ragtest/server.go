// Package ragtest provides a small OpenAI-compatible target with a vector
// index for tests of Q1: embeddings (deterministic vectors), POST
// /v1/retrieve (exact search over a synthetic corpus) and streamed chat
// completions. It can fail or hang chosen retrieves so that a test sees
// error records, and it counts the requests in flight per endpoint so that
// a test can check the harness's concurrency. It binds 127.0.0.1 on a free
// port.
package ragtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"

	"github.com/sagebench/sagebench/internal/stack/index"
)

// Options shape a Server. Zero values are a healthy target.
type Options struct {
	Dim       int   // embedding dimension (default 32)
	Docs      int   // corpus size (default 200)
	Seed      int64 // corpus seed
	Tokens    int   // streamed tokens per chat (default 4)
	FailEvery int   // every n-th retrieve (1-based) answers 500; 0: never
	HangEvery int   // every n-th retrieve hangs until the client gives up; 0: never
	// EmbedHold keeps each embedding request open this long, or until
	// EmbedBarrier requests are in flight together, whichever is first.
	EmbedHold    time.Duration
	EmbedBarrier int
	// NoRetrieve leaves /v1/retrieve out (404), like a plain
	// OpenAI-compatible server.
	NoRetrieve bool
}

// Server is a fake RAG target.
type Server struct {
	*httptest.Server
	opts    Options
	ix      *index.Index
	closing chan struct{}
	once    sync.Once

	mu        sync.Mutex
	retrieves int
	inFlight  map[string]int
	peak      map[string]int
	count     map[string]int
}

// NewServer starts a server; Close it when done.
func NewServer(o Options) (*Server, error) {
	if o.Dim == 0 {
		o.Dim = 32
	}
	if o.Docs == 0 {
		o.Docs = 200
	}
	if o.Tokens == 0 {
		o.Tokens = 4
	}
	ix, err := index.Build(index.Config{Size: o.Docs, Dim: o.Dim, Seed: o.Seed, M: 4, EfConstruction: 8},
		func(t string) []float32 { return corpus.Vector(t, o.Dim) })
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, ix: ix, closing: make(chan struct{}), inFlight: map[string]int{},
		peak: map[string]int{}, count: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-llm","object":"model"},{"id":"m","object":"model"},`+
			`{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model"},{"id":"BAAI/bge-small-en-v1.5","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/embeddings", s.track("embeddings", s.embed))
	if !o.NoRetrieve {
		mux.HandleFunc("POST /v1/retrieve", s.track("retrieve", s.retrieve))
	}
	mux.HandleFunc("POST /v1/chat/completions", s.track("chat", s.chat))
	s.Server = httptest.NewServer(mux)
	return s, nil
}

// Close releases hanging handlers and stops the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.CloseClientConnections()
	s.Server.Close()
}

// Peak returns the most requests of endpoint ("embeddings", "retrieve",
// "chat") that were in flight at once.
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

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.hold()
	data := make([]map[string]any, len(req.Input))
	for i, in := range req.Input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": corpus.Vector(in, s.opts.Dim)}
	}
	w.Header().Set("X-Engine-Id", "fake-embed-0")
	writeJSON(w, map[string]any{"object": "list", "data": data, "model": "fake-embed",
		"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
}

// hold keeps an embedding in flight for EmbedHold or until EmbedBarrier
// embeddings are in flight together.
func (s *Server) hold() {
	if s.opts.EmbedHold <= 0 {
		return
	}
	deadline := time.After(s.opts.EmbedHold)
	for {
		s.mu.Lock()
		n := s.inFlight["embeddings"]
		s.mu.Unlock()
		if s.opts.EmbedBarrier > 0 && n >= s.opts.EmbedBarrier {
			time.Sleep(5 * time.Millisecond) // let the others see it too
			return
		}
		select {
		case <-deadline:
			return
		case <-s.closing:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Embedding []float32 `json:"embedding"`
		TopK      int       `json:"top_k"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Embedding) != s.opts.Dim || req.TopK < 1 {
		http.Error(w, `{"error":{"message":"bad retrieve request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.retrieves++
	n := s.retrieves
	s.mu.Unlock()
	switch {
	case s.opts.FailEvery > 0 && n%s.opts.FailEvery == 0:
		http.Error(w, `{"error":{"message":"index shard down"}}`, http.StatusInternalServerError)
		return
	case s.opts.HangEvery > 0 && n%s.opts.HangEvery == 0:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	hits, _ := s.ix.Exact(req.Embedding, req.TopK)
	data := make([]map[string]any, len(hits))
	for i, h := range hits {
		data[i] = map[string]any{"id": h.ID, "score": h.Score, "text": h.Text}
	}
	writeJSON(w, map[string]any{"object": "list", "data": data, "model": "fake-embed"})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Engine-Id", "fake-llm-0")
	fl, _ := w.(http.Flusher)
	for i := range s.opts.Tokens {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		if fl != nil {
			fl.Flush()
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", s.opts.Tokens, s.opts.Tokens+50)
	io.WriteString(w, "data: [DONE]\n\n")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
