package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is one chat completion. Header carries the sagebench
// request headers (X-Tenant-Id, X-Request-Priority, X-SLO-Deadline-Ms,
// X-Request-Type) or any other. OnToken, when set, is called on the
// reading goroutine for each non-empty content delta of a stream, with the
// time it was parsed.
type ChatRequest struct {
	Model        string
	Messages     []Message
	MaxTokens    int
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
	Header       http.Header
	OnToken      func(at time.Time, text string)
}

type chatBody struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// chunk is one streamed chat.completion.chunk (only what we read).
type chunk struct {
	Choices []choiceDelta   `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choiceDelta struct {
	Delta struct {
		Content string `json:"content"`
	} `json:"delta"`
}

// completion is a non-streamed chat.completion.
type completion struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

var doneData = []byte("[DONE]")

// Chat sends a chat completion and reads its answer (streamed or not).
func (c *Client) Chat(ctx context.Context, req ChatRequest) (res Result) { // named: done (deferred) completes it
	body := chatBody{Model: req.Model, Messages: req.Messages, MaxTokens: req.MaxTokens, Stream: req.Stream}
	if req.Stream && req.IncludeUsage {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(body)
	if err != nil {
		c.fail(&res, ClassMalformed, fmt.Errorf("encoding chat request: %w", err))
		return res
	}
	cl := c.send(ctx, http.MethodPost, "/v1/chat/completions", b, req.Header, req.Stream, &res)
	if cl == nil {
		return res
	}
	defer c.done(cl, &res)
	if req.Stream && !isJSON(cl.resp.Header.Get("Content-Type")) {
		c.readStream(cl, &req, &res)
	} else {
		c.readCompletion(cl, &res)
	}
	return res
}

func (c *Client) readCompletion(cl *call, res *Result) {
	data, err := io.ReadAll(cl.body)
	res.End = time.Now()
	if err != nil {
		c.readErr(cl, res, err)
		return
	}
	var out completion
	if err := json.Unmarshal(data, &out); err != nil {
		c.fail(res, ClassMalformed, fmt.Errorf("decoding chat completion: %w (body starts %q)", err, c.excerpt(data, 64)))
		return
	}
	if errFromTarget(out.Error) {
		c.fail(res, ClassStreamError, fmt.Errorf("target reported an error: %s", c.excerpt([]byte(out.Error), 200)))
		return
	}
	if len(out.Choices) == 0 {
		c.fail(res, ClassMalformed, errors.New("chat completion has no choices"))
		return
	}
	res.Text = out.Choices[0].Message.Content
	if out.Usage != nil {
		res.PromptTokens, res.CompletionTokens = out.Usage.PromptTokens, out.Usage.CompletionTokens
	}
}

// isJSON reports whether a Content-Type is JSON: a target that ignores
// "stream": true and answers with one completion is read as such.
func isJSON(ct string) bool {
	return strings.HasPrefix(strings.TrimSpace(strings.ToLower(ct)), "application/json")
}

// errFromTarget reports whether an "error" member carries something.
func errFromTarget(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// readStream consumes an SSE chat stream up to [DONE].
func (c *Client) readStream(cl *call, req *ChatRequest, res *Result) {
	sr := NewSSEReader(cl.body, c.cfg.MaxLineBytes)
	var text strings.Builder
	defer func() { res.Text = text.String() }()
	for {
		ev, err := sr.Next()
		if err != nil {
			c.streamEnd(cl, res, err)
			return
		}
		if bytes.Equal(ev.Data, doneData) {
			res.End = time.Now()
			if res.CompletionTokens == 0 {
				res.CompletionTokens = len(res.Tokens)
			}
			return
		}
		if ev.Name == "error" {
			c.fail(res, ClassStreamError, fmt.Errorf("error event in stream: %s", c.excerpt([]byte(ev.Data), 200)))
			return
		}
		if !c.applyChunk(ev.Data, req, res, &text) {
			return
		}
	}
}

func (c *Client) streamEnd(cl *call, res *Result, err error) {
	if errors.Is(err, io.EOF) {
		c.fail(res, ClassTruncated, fmt.Errorf("stream ended without [DONE] after %d tokens", len(res.Tokens)))
		return
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		c.fail(res, ClassTruncated, fmt.Errorf("stream cut inside a line after %d tokens", len(res.Tokens)))
		return
	}
	c.readErr(cl, res, err)
}

// decodeChunk decodes a stream chunk: fastChunk, else encoding/json.
func decodeChunk(data []byte, ch *chunk) error {
	if fastChunk(data, ch) {
		return nil
	}
	*ch = chunk{}
	return json.Unmarshal(data, ch)
}

// applyChunk decodes one data payload; it returns false after a failure.
func (c *Client) applyChunk(data []byte, req *ChatRequest, res *Result, text *strings.Builder) bool {
	var ch chunk
	if err := decodeChunk(data, &ch); err != nil {
		c.fail(res, ClassMalformed, fmt.Errorf("decoding stream chunk %d: %w (data starts %q)", len(res.Tokens), err, c.excerpt(data, 64)))
		return false
	}
	if errFromTarget(ch.Error) {
		c.fail(res, ClassStreamError, fmt.Errorf("target reported an error in the stream: %s", c.excerpt([]byte(ch.Error), 200)))
		return false
	}
	for _, choice := range ch.Choices {
		if s := choice.Delta.Content; s != "" {
			now := time.Now()
			if res.FirstToken.IsZero() {
				res.FirstToken = now
			}
			res.Tokens = append(res.Tokens, now)
			text.WriteString(s)
			if req.OnToken != nil {
				req.OnToken(now, s)
			}
		}
	}
	if ch.Usage != nil {
		res.PromptTokens, res.CompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
	}
	return true
}
