package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

// LLM is a remote text-generation engine.
type LLM struct{ *base }

var _ engine.LLM = (*LLM)(nil)

// NewLLM returns a client for the engine at cfg.URL. It does not connect.
func NewLLM(cfg Config) (*LLM, error) {
	b, err := newBase(cfg)
	if err != nil {
		return nil, err
	}
	return &LLM{b}, nil
}

type chatBody struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	MaxTokens     int           `json:"max_tokens,omitempty"`
	Stream        bool          `json:"stream"`
	StreamOptions streamOptions `json:"stream_options"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Generate starts a streamed completion: the request's messages, or its
// prompt as one user message. It returns when the server has answered with its headers; the
// stream's requests end when ctx is done or the stream is closed.
func (l *LLM) Generate(ctx context.Context, req engine.ChatRequest) (engine.Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	l.running.Add(1)
	msgs := []chatMessage{{Role: "user", Content: req.Prompt}}
	if len(req.Messages) > 0 { // forwarded as sent, so the server counts what the client sent
		msgs = make([]chatMessage, len(req.Messages))
		for i, m := range req.Messages {
			msgs[i] = chatMessage{Role: m.Role, Content: m.Content}
		}
	}
	resp, err := l.post(ctx, "/v1/chat/completions", chatBody{
		Model: l.cfg.Model, Messages: msgs,
		MaxTokens: req.MaxTokens, Stream: true, StreamOptions: streamOptions{IncludeUsage: true},
	}, true)
	if err != nil {
		cancel()
		l.running.Add(-1)
		return nil, err
	}
	gate := &eventGate{r: resp.Body}
	return &stream{l: l, body: resp.Body, gate: gate, sse: openai.NewSSEReader(gate, 0), cancel: cancel}, nil
}

// stream reads one completion's SSE events.
type stream struct {
	l      *LLM
	body   io.ReadCloser
	gate   *eventGate // between body and sse: shows what is ready
	sse    *openai.SSEReader
	cancel context.CancelFunc
	usage  engine.Usage
	n      int
	err    error // sticky: io.EOF after [DONE]
	once   sync.Once
}

// chunk is what the gateway reads of a chat.completion.chunk (decodeChunk).
type chunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage"`
	Error   *chunkError   `json:"error"`
}

type chunkChoice struct {
	Delta chunkDelta `json:"delta"`
}

type chunkDelta struct {
	Content string `json:"content"`
}

type chunkUsage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	PromptTokensDetails *chunkDetails `json:"prompt_tokens_details"`
}

type chunkDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type chunkError struct {
	Message string `json:"message"`
}

// Recv returns the next non-empty content delta. ctx is checked between
// events; the request itself is bound to Generate's context.
func (s *stream) Recv(ctx context.Context) (engine.Token, error) {
	for s.err == nil {
		if err := ctx.Err(); err != nil {
			return engine.Token{}, err
		}
		if tok, ok := s.next(); ok {
			return tok, nil
		}
	}
	return engine.Token{}, s.err
}

// TryRecv is Recv without waiting: it reads only events that have already
// arrived whole, and reports ok false when the next token (or the end)
// would need the network. The gateway drains what is ready with it to
// write tokens that arrived together in one flush.
func (s *stream) TryRecv() (engine.Token, bool, error) {
	for s.err == nil && s.gate.ready() {
		if tok, ok := s.next(); ok {
			return tok, true, nil
		}
	}
	if s.err != nil {
		return engine.Token{}, true, s.err
	}
	return engine.Token{}, false, nil
}

// next reads one event: a token (ok), or nothing, setting s.err at the end.
func (s *stream) next() (engine.Token, bool) {
	ev, err := s.sse.Next()
	if err != nil {
		s.err = s.endErr(err)
		return engine.Token{}, false
	}
	if string(ev.Data) == "[DONE]" {
		s.err = io.EOF
		return engine.Token{}, false
	}
	tok, ok, err := s.apply(ev)
	if err != nil {
		s.err = err
	}
	return tok, ok
}

func (s *stream) apply(ev openai.Event) (engine.Token, bool, error) {
	c, err := decodeChunk(ev.Data)
	if err != nil {
		return engine.Token{}, false, fmt.Errorf("engine %s: malformed stream chunk: %v", s.l.cfg.ID, err)
	}
	if c.Error != nil || ev.Name == "error" {
		msg := "error event"
		if c.Error != nil {
			msg = c.Error.Message
		}
		return engine.Token{}, false, fmt.Errorf("engine %s: %s", s.l.cfg.ID, s.l.redactor.String(msg))
	}
	if u := c.Usage; u != nil {
		s.usage = engine.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			s.usage.CachedTokens = u.PromptTokensDetails.CachedTokens
		}
	}
	if len(c.Choices) == 0 || c.Choices[0].Delta.Content == "" {
		return engine.Token{}, false, nil
	}
	tok := engine.Token{Index: s.n, Text: c.Choices[0].Delta.Content}
	s.n++
	return tok, true, nil
}

// endErr maps the end of the body before [DONE].
func (s *stream) endErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: engine %s: stream ended before [DONE]: %v", engine.ErrClosed, s.l.cfg.ID, err)
}

// Usage reports the server's usage, or the tokens counted when it sent none.
func (s *stream) Usage() engine.Usage {
	u := s.usage
	if u.CompletionTokens == 0 {
		u.CompletionTokens = s.n
	}
	return u
}

// Close ends the request and releases the connection.
func (s *stream) Close() {
	s.once.Do(func() {
		s.cancel()
		_ = s.body.Close()
		s.l.running.Add(-1)
	})
}
