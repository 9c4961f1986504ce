package targettest

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
)

// RAGOptions make a Server a RAG target. Zero values are a healthy one.
type RAGOptions struct {
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

// ragState is what a RAG target adds to a Server.
type ragState struct {
	opts      RAGOptions
	docs      *corpus.Corpus
	retrieves int // guarded by the Server's mu
}

// NewRAG starts a RAG target: embeddings are corpus.Vector of each input
// (the vectors the reference stack's simulated embedders return) and
// POST /v1/retrieve searches the synthetic corpus exactly. Close it when
// done.
func NewRAG(o RAGOptions) (*Server, error) {
	if o.Dim == 0 {
		o.Dim = 32
	}
	if o.Docs == 0 {
		o.Docs = 200
	}
	if o.Tokens == 0 {
		o.Tokens = 4
	}
	docs, err := corpus.New(corpus.Config{Size: o.Docs, Dim: o.Dim, Seed: o.Seed},
		func(t string) []float32 { return corpus.Vector(t, o.Dim) })
	if err != nil {
		return nil, err
	}
	s := newServer(OK)
	s.Tokens, s.rag = o.Tokens, &ragState{opts: o, docs: docs}
	return start(s), nil
}

func (s *Server) ragEmbed(w http.ResponseWriter, r *http.Request) {
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
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": corpus.Vector(in, s.rag.opts.Dim)}
	}
	w.Header().Set("X-Engine-Id", "fake-embed-0")
	writeJSON(w, map[string]any{"object": "list", "data": data, "model": "fake-embed",
		"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
}

// hold keeps an embedding in flight for EmbedHold or until EmbedBarrier
// embeddings are in flight together.
func (s *Server) hold() {
	o := s.rag.opts
	if o.EmbedHold <= 0 {
		return
	}
	deadline := time.After(o.EmbedHold)
	for {
		s.mu.Lock()
		n := s.inFlight["embeddings"]
		s.mu.Unlock()
		if o.EmbedBarrier > 0 && n >= o.EmbedBarrier {
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
	o := s.rag.opts
	var req struct {
		Embedding []float32 `json:"embedding"`
		TopK      int       `json:"top_k"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Embedding) != o.Dim || req.TopK < 1 {
		http.Error(w, `{"error":{"message":"bad retrieve request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.rag.retrieves++
	n := s.rag.retrieves
	s.mu.Unlock()
	switch {
	case o.FailEvery > 0 && n%o.FailEvery == 0:
		http.Error(w, `{"error":{"message":"index shard down"}}`, http.StatusInternalServerError)
		return
	case o.HangEvery > 0 && n%o.HangEvery == 0:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	hits, _ := s.rag.docs.Exact(req.Embedding, req.TopK)
	data := make([]map[string]any, len(hits))
	for i, h := range hits {
		data[i] = map[string]any{"id": h.ID, "score": h.Score, "text": h.Text}
	}
	writeJSON(w, map[string]any{"object": "list", "data": data, "model": "fake-embed"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
