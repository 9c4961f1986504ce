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
	cfg   Config
	serve Serve
	log   *truthLog
	srv   *http.Server
	url   string
	done  chan struct{}
}

// Start listens on 127.0.0.1:0 and serves until Close.
func Start(cfg Config) (*Server, error) { return start(cfg, Serve{}) }

// StartServe is the conformance server (`sagebench calibrate serve`):
// Start with opts — its address, the ground-truth log, the documented
// schedule of output lengths and the role chunk.
func StartServe(cfg Config, opts Serve) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return start(cfg, opts)
}

// start is Start with the serve options; opts.Models are the model ids
// GET /v1/models lists: the exact server answers any model, and lists
// those the workload asks for so that the runner's model check passes.
func start(cfg Config, opts Serve) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("calibrate: listening: %w", err)
	}
	s := &Server{cfg: cfg, serve: opts, url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	if opts.Log != nil {
		s.log = newTruthLog(opts.Log, cfg)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+protocol.PathChat, s.chat)
	mux.HandleFunc("POST "+PathCompletions, s.chat)
	mux.HandleFunc("POST "+protocol.PathEmbeddings, s.embed)
	list := modelList(opts.Models)
	mux.HandleFunc("GET "+protocol.PathModels, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(list)
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

// modelList is the JSON of GET /v1/models listing ids.
func modelList(ids []string) []byte {
	type model struct {
		ID     string `json:"id"`
		Object string `json:"object"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		out.Data = append(out.Data, model{ID: id, Object: "model"})
	}
	b, _ := json.Marshal(out)
	return b
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.url }

// Config is the server's effective configuration (defaults filled).
func (s *Server) Config() Config { return s.cfg }

// Close stops the server, drops open streams and flushes the truth log.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	if s.log != nil {
		if ferr := s.log.close(); err == nil {
			err = ferr
		}
	}
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
	MaxCompl  int    `json:"max_completion_tokens"`
	Stream    bool   `json:"stream"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	recv := time.Now()
	var req chatRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n := s.outputTokens(req)
	text := r.URL.Path == PathCompletions
	if !req.Stream {
		waitUntil(recv.Add(s.cfg.TTFT + time.Duration(n-1)*s.cfg.ITL))
		ready := time.Since(recv)
		w.Header().Set(protocol.HeaderServerTiming, protocol.ServerTiming{FirstToken: ready, End: ready}.String())
		w.Header().Set("Content-Type", "application/json")
		writeWhole(w, req.Model, n, text)
		s.log.add(recv, n, false, []time.Duration{ready}, ready)
		return
	}
	s.stream(w, req, n, recv, text)
}

// outputTokens is the schedule's output length of req: its max_tokens
// (or max_completion_tokens) capped at MaxTokens; a request that names
// neither gets the serve options' default length.
func (s *Server) outputTokens(req chatRequest) int {
	asked := req.MaxTokens
	if asked <= 0 {
		asked = req.MaxCompl
	}
	if asked <= 0 && s.serve.DefaultTokens > 0 {
		asked = s.serve.DefaultTokens
	}
	return min(max(asked, 1), s.cfg.MaxTokens)
}

// stream writes token i at recv + TTFT + i·ITL, flushing each; with
// RoleChunk a content-free chunk naming the role goes first, at once.
func (s *Server) stream(w http.ResponseWriter, req chatRequest, n int, recv time.Time, text bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Trailer", protocol.HeaderServerTiming)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if s.serve.RoleChunk && !text {
		io.WriteString(w, roleChunk(req.Model))
		if rc.Flush() != nil {
			return
		}
	}
	var writes []time.Duration
	if s.log != nil {
		writes = make([]time.Duration, 0, n)
	}
	var first time.Duration
	for i := range n {
		waitUntil(recv.Add(s.cfg.TTFT + time.Duration(i)*s.cfg.ITL))
		io.WriteString(w, tokenChunk(req.Model, text))
		if rc.Flush() != nil {
			return
		}
		at := time.Since(recv)
		if i == 0 {
			first = at
		}
		if writes != nil {
			writes = append(writes, at)
		}
	}
	io.WriteString(w, lastChunk(req.Model, n, text))
	end := time.Since(recv)
	w.Header().Set(protocol.HeaderServerTiming, protocol.ServerTiming{FirstToken: first, End: end}.String())
	s.log.add(recv, n, true, writes, end)
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
