package calibrate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// PathCompletions is the text-completions endpoint the conformance server
// also answers (some tools default to it).
const PathCompletions = "/v1/completions"

// Serve are the conformance server's options on top of Config.
type Serve struct {
	Addr          string    // listen address (default 127.0.0.1:0); must be a loopback address
	Log           io.Writer // ground-truth log, one JSON line per answered request (nil: none)
	DefaultTokens int       // output length of a request naming no max_tokens (default: 1)
	RoleChunk     bool      // streamed chat: a content-free {"role":"assistant"} chunk first, at receipt
	Models        []string  // ids GET /v1/models lists
}

// Validate rejects a non-loopback address or an impossible length: the
// conformance server is for tools on this machine only.
func (o Serve) Validate() error {
	if o.Addr != "" {
		host, _, err := net.SplitHostPort(o.Addr)
		if err != nil {
			return fmt.Errorf("calibrate serve --addr %q: %w", o.Addr, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("calibrate serve --addr %q: must be a loopback address such as 127.0.0.1:8000", o.Addr)
		}
	}
	if o.DefaultTokens < 0 || o.DefaultTokens > 16384 {
		return fmt.Errorf("calibrate serve --tokens %d: must be in [0, 16384]", o.DefaultTokens)
	}
	return nil
}

// Truth is one line of the ground-truth log: what the server really did
// for one request, times in ms from its receipt of the request.
type Truth struct {
	Seq       int64     `json:"seq"`         // order of completion, from 1
	RecvNS    int64     `json:"recv_ns"`     // receipt, Unix ns
	Stream    bool      `json:"stream"`      // streamed answer
	Tokens    int       `json:"tokens"`      // output tokens written (one content chunk each)
	TTFTMs    float64   `json:"ttft_ms"`     // first content chunk flushed
	E2EMs     float64   `json:"e2e_ms"`      // last byte written
	TokenMs   []float64 `json:"token_ms"`    // each content chunk flushed (streams)
	DueTTFTMs float64   `json:"due_ttft_ms"` // the schedule's TTFT
	DueITLMs  float64   `json:"due_itl_ms"`  // the schedule's ITL
}

// truthLog writes Truth lines; safe for concurrent handlers. A nil log
// records nothing.
type truthLog struct {
	mu  sync.Mutex
	w   *bufio.Writer
	seq int64
	cfg Config
	err error
}

func newTruthLog(w io.Writer, cfg Config) *truthLog {
	return &truthLog{w: bufio.NewWriterSize(w, 1<<16), cfg: cfg}
}

func (l *truthLog) add(recv time.Time, n int, stream bool, writes []time.Duration, end time.Duration) {
	if l == nil {
		return
	}
	t := Truth{RecvNS: recv.UnixNano(), Stream: stream, Tokens: n, E2EMs: ms(end), TokenMs: make([]float64, len(writes)),
		DueTTFTMs: ms(l.cfg.TTFT), DueITLMs: ms(l.cfg.ITL)}
	for i, d := range writes {
		t.TokenMs[i] = ms(d)
	}
	if len(writes) > 0 {
		t.TTFTMs = t.TokenMs[0]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	t.Seq = l.seq
	b, _ := json.Marshal(t) // plain fields: cannot fail
	b = append(b, '\n')
	if _, err := l.w.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

func (l *truthLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return fmt.Errorf("calibrate: truth log: %w", l.err)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func roleChunk(model string) string {
	return `data: {"id":"cal","object":"chat.completion.chunk","model":` + strconv.Quote(model) +
		`,"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
}

func tokenChunk(model string, text bool) string {
	if text {
		return `data: {"id":"cal","object":"text_completion","model":` + strconv.Quote(model) +
			`,"choices":[{"index":0,"text":"t "}]}` + "\n\n"
	}
	return `data: {"id":"cal","object":"chat.completion.chunk","model":` + strconv.Quote(model) +
		`,"choices":[{"index":0,"delta":{"content":"t "}}]}` + "\n\n"
}

func lastChunk(model string, n int, text bool) string {
	obj, choice := "chat.completion.chunk", `{"index":0,"delta":{},"finish_reason":"length"}`
	if text {
		obj, choice = "text_completion", `{"index":0,"text":"","finish_reason":"length"}`
	}
	return fmt.Sprintf(`data: {"id":"cal","object":%q,"model":%q,"choices":[%s],"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n",
		obj, model, choice, n, n+1)
}

func writeWhole(w io.Writer, model string, n int, text bool) {
	content := make([]byte, 0, 2*n)
	for range n {
		content = append(content, "t "...)
	}
	if text {
		fmt.Fprintf(w, `{"id":"cal","object":"text_completion","model":%q,"choices":[{"index":0,"text":%q,"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d}}`,
			model, content, n, n+1)
		return
	}
	fmt.Fprintf(w, `{"id":"cal","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d}}`,
		model, content, n, n+1)
}
