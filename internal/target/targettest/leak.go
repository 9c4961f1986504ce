package targettest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
)

// Leaker is a working OpenAI-compatible target that hands every
// credential it receives back through every channel a harness might keep:
// the X-Engine-Id header of each answer, the error body of every third
// chat request and the error event of every third stream, the 400 body of
// every second policy switch (the admin token), its model list and its /metrics
// label values (the last credential seen). Encode says how it hands them
// back (nil: as received). HeaderBytes and LabelBytes pad the engine id
// and the label values to that many bytes (0: no padding), to try the
// harness's bounds.
type Leaker struct {
	*httptest.Server
	Encode      func(string) string
	HeaderBytes int
	LabelBytes  int

	n    atomic.Int64
	sets atomic.Int64
	mu   sync.Mutex
	last string // the last Authorization received
}

// NewLeaker starts a Leaker; set its fields before the first request and
// Close it when done.
func NewLeaker() *Leaker {
	l := &Leaker{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("GET /v1/models", l.models)
	mux.HandleFunc("POST /v1/chat/completions", l.chat)
	mux.HandleFunc("POST /v1/embeddings", l.embed)
	mux.HandleFunc("/admin/policy", l.admin)
	mux.HandleFunc("GET /metrics", l.metrics)
	l.Server = httptest.NewServer(mux)
	return l
}

// leak is what the target hands back for a received credential.
func (l *Leaker) leak(auth string) string {
	if l.Encode != nil {
		return l.Encode(auth)
	}
	return auth
}

func (l *Leaker) saw(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	l.mu.Lock()
	defer l.mu.Unlock()
	if auth != "" {
		l.last = auth
	}
	return l.last
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat("x", n-len(s))
}

func (l *Leaker) models(w http.ResponseWriter, r *http.Request) {
	ids := append(DefaultModels(), "leak-"+l.leak(l.saw(r)))
	data := make([]map[string]string, len(ids))
	for i, id := range ids {
		data[i] = map[string]string{"id": id, "object": "model"}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (l *Leaker) chat(w http.ResponseWriter, r *http.Request) {
	auth := l.saw(r)
	var req struct {
		Stream bool `json:"stream"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
	w.Header().Set("X-Engine-Id", pad("llm-"+l.leak(auth), l.HeaderBytes))
	n := l.n.Add(1)
	msg, _ := json.Marshal("you sent " + l.leak(auth))
	switch {
	case n%3 == 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%s}}`, msg)
	case req.Stream && n%3 == 1:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\nevent: error\ndata: {\"error\":{\"message\":%s}}\n\n", msg)
	case req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}
}

func (l *Leaker) embed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Engine-Id", pad("embed-"+l.leak(l.saw(r)), l.HeaderBytes))
	writeEmbeddings(w, r.Body)
}

func (l *Leaker) admin(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization") // the admin token's, not the key's
	if r.Method != http.MethodPost || l.sets.Add(1)%2 == 1 {
		io.WriteString(w, `{"policy":"fifo"}`)
		return
	}
	msg, _ := json.Marshal("policy refused for " + l.leak(auth))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"error":{"message":%s}}`, msg)
}

func (l *Leaker) metrics(w http.ResponseWriter, r *http.Request) {
	v := pad(l.leak(l.saw(r)), l.LabelBytes)
	v = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"%s\"} 1\n", v)
	fmt.Fprintf(w, "# TYPE sagebench_gateway_queue_depth gauge\nsagebench_gateway_queue_depth{model=\"%s\"} 2\n", v)
}
