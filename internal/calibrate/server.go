package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

// Config sets the exact server's answers. Zero fields take the defaults
// noted.
type Config struct {
	TTFT         time.Duration `yaml:"ttft" json:"ttft"`                   // request received → first token (default 50ms)
	ITL          time.Duration `yaml:"itl" json:"itl"`                     // between tokens (default 10ms)
	EmbedLatency time.Duration `yaml:"embed_latency" json:"embed_latency"` // request received → embeddings (default 5ms)
	MaxTokens    int           `yaml:"max_tokens" json:"max_tokens"`       // cap on a request's max_tokens (default 512)
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.TTFT == 0 {
		c.TTFT = 50 * time.Millisecond
	}
	if c.ITL == 0 {
		c.ITL = 10 * time.Millisecond
	}
	if c.EmbedLatency == 0 {
		c.EmbedLatency = 5 * time.Millisecond
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 512
	}
	return c
}

// Validate reports an impossible setting.
func (c Config) Validate() error {
	c = c.WithDefaults()
	for name, d := range map[string]time.Duration{"ttft": c.TTFT, "itl": c.ITL, "embed_latency": c.EmbedLatency} {
		if d < 0 || d > time.Minute {
			return fmt.Errorf("calibrate.%s %v: must be in [0, 1m]", name, d)
		}
	}
	if c.MaxTokens < 1 || c.MaxTokens > 16384 {
		return fmt.Errorf("calibrate.max_tokens %d: must be in [1, 16384]", c.MaxTokens)
	}
	return nil
}

// Server is the exact-deadline server, on 127.0.0.1 with a free port.
type Server struct {
	cfg  Config
	srv  *http.Server
	url  string
	done chan struct{}
}

// Start listens on 127.0.0.1:0 and serves until Close.
func Start(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("calibrate: listening: %w", err)
	}
	s := &Server{cfg: cfg, url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+protocol.PathChat, s.chat)
	mux.HandleFunc("POST "+protocol.PathEmbeddings, s.embed)
	mux.HandleFunc("GET "+protocol.PathModels, func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"object":"list","data":[]}`)
	})
	mux.HandleFunc("GET "+protocol.PathHealth, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc(protocol.PathAdminPolicy, s.policy)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // Close reports nothing more useful; requests then fail as connect errors
		}
	}()
	return s, nil
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.url }

// Config is the server's effective configuration (defaults filled).
func (s *Server) Config() Config { return s.cfg }

// Close stops the server and drops open streams.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

// policy accepts any policy: the exact server has no scheduler, and a
// workload that switches policies runs its phases against it unchanged.
func (s *Server) policy(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Policy string `json:"policy"`
	}
	if r.Method == http.MethodPost {
		_ = json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&b)
	}
	if b.Policy == "" {
		b.Policy = protocol.PolicyFIFO
	}
	json.NewEncoder(w).Encode(b)
}

// waitUntil sleeps until t; the overshoot is the timer's, and the caller
// measures it rather than assume it away.
func waitUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}

type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	recv := time.Now()
	var req chatRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n := min(max(req.MaxTokens, 1), s.cfg.MaxTokens)
	if !req.Stream {
		waitUntil(recv.Add(s.cfg.TTFT + time.Duration(n-1)*s.cfg.ITL))
		ready := time.Since(recv)
		w.Header().Set(protocol.HeaderServerTiming, protocol.ServerTiming{FirstToken: ready, End: ready}.String())
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"cal","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d}}`,
			req.Model, strings.Repeat("t ", n), n, n+1)
		return
	}
	s.stream(w, req, n, recv)
}

// stream writes token i at recv + TTFT + i·ITL, flushing each.
func (s *Server) stream(w http.ResponseWriter, req chatRequest, n int, recv time.Time) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Trailer", protocol.HeaderServerTiming)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var first time.Duration
	for i := range n {
		waitUntil(recv.Add(s.cfg.TTFT + time.Duration(i)*s.cfg.ITL))
		fmt.Fprintf(w, "data: {\"id\":\"cal\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t \"}}]}\n\n", req.Model)
		if rc.Flush() != nil {
			return
		}
		if i == 0 {
			first = time.Since(recv)
		}
	}
	fmt.Fprintf(w, "data: {\"id\":\"cal\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", req.Model, n, n+1)
	w.Header().Set(protocol.HeaderServerTiming, protocol.ServerTiming{FirstToken: first, End: time.Since(recv)}.String())
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	recv := time.Now()
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n := 1
	if list, ok := req.Input.([]any); ok {
		n = max(len(list), 1)
	}
	waitUntil(recv.Add(s.cfg.EmbedLatency))
	ready := time.Since(recv)
	w.Header().Set(protocol.HeaderServerTiming, protocol.ServerTiming{FirstToken: ready, End: ready}.String())
	w.Header().Set("Content-Type", "application/json")
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"object":"embedding","index":%d,"embedding":[0.6,0.8]}`, i)
	}
	fmt.Fprintf(&b, `],"model":%q,"usage":{"prompt_tokens":%d,"total_tokens":%d}}`, req.Model, n, n)
	io.WriteString(w, b.String())
}
