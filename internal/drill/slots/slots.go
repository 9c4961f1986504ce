// Package slots is a test target of known capacity for the drills' capacity
// probe (see SlotServer).
package slots

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// SlotServer is an OpenAI-compatible target of known capacity: K slots
// serve chat completions, each for a fixed TTFT and then Tokens tokens
// TokenDelay apart, the requests past the slots waiting in a queue with
// their headers sent at once (as vLLM admits them); embeddings answer at
// once, outside the slots. Its true capacity for chat completions is K ÷
// the mean time a chat held its slot — measured by the server itself, so
// that a loaded machine's late timers move the truth with the service.
// It binds 127.0.0.1 on a free port.
type SlotServer struct {
	*httptest.Server
	K          int
	TTFT       time.Duration
	Tokens     int
	TokenDelay time.Duration

	slots chan struct{}
	mu    sync.Mutex
	held  []span // the slot time of each chat served
}

type span struct{ from, to time.Time }

// NewSlotServer starts a SlotServer; Close it when done.
func NewSlotServer(k int, ttft time.Duration, tokens int, tokenDelay time.Duration) *SlotServer {
	s := &SlotServer{K: k, TTFT: ttft, Tokens: tokens, TokenDelay: tokenDelay, slots: make(chan struct{}, k)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model"},{"id":"BAAI/bge-small-en-v1.5","object":"model"}]}`)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embed)
	s.Server = httptest.NewServer(mux)
	return s
}

// ChatCapacity is K ÷ the mean slot time of the chats that took their
// slot in [from, to) (chats/s); 0 when none did.
func (s *SlotServer) ChatCapacity(from, to time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum time.Duration
	n := 0
	for _, h := range s.held {
		if !h.from.Before(from) && h.from.Before(to) {
			sum, n = sum+h.to.Sub(h.from), n+1
		}
	}
	if n == 0 || sum <= 0 {
		return 0
	}
	return float64(s.K) / (sum.Seconds() / float64(n))
}

func (s *SlotServer) chat(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Engine-Id", "slots-0")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush() // headers at once, before a slot: the way vLLM admits
	}
	select {
	case s.slots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	start := time.Now()
	defer func() {
		end := time.Now()
		<-s.slots
		s.mu.Lock()
		s.held = append(s.held, span{start, end})
		s.mu.Unlock()
	}()
	time.Sleep(s.TTFT)
	for i := range s.Tokens {
		if i > 0 {
			time.Sleep(s.TokenDelay)
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		if fl != nil {
			fl.Flush()
		}
	}
	fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", s.Tokens, s.Tokens+3)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *SlotServer) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Engine-Id", "embed-0")
	fmt.Fprint(w, `{"object":"list","data":[`)
	for i := range req.Input {
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, `{"object":"embedding","index":%d,"embedding":[0.1,0.2,0.3]}`, i)
	}
	fmt.Fprintf(w, `],"model":"BAAI/bge-small-en-v1.5","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, len(req.Input), len(req.Input))
}
