package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// time it was parsed. The answer's text is decoded only when KeepText or
// OnToken asks for it: a run keeps counts and times, not the text.
type ChatRequest struct {
	Model        string
	Messages     []Message
	MaxTokens    int
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
	KeepText     bool // fill Result.Text with the answer
	Header       http.Header
	OnToken      func(at time.Time, text string)
	// IgnoreEOS and MinTokens pin the output length on servers that take
	// them (vLLM, SGLang, TensorRT-LLM: "ignore_eos": true, "min_tokens":
	// N); zero values are not sent.
	IgnoreEOS bool
	MinTokens int
}

type chatBody struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	MinTokens     int            `json:"min_tokens,omitempty"`
	IgnoreEOS     bool           `json:"ignore_eos,omitempty"`
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

// MaxReportedTokens bounds a token count a target reports (usage, or
// /tokenize): far above any request (16 M tokens), far below an absurd
// one.
const MaxReportedTokens = 1 << 24

// counts are u's prompt and completion tokens as a Result keeps them: a
// count the target cannot mean (negative, or beyond MaxReportedTokens) is
// not reported (0), never recorded as it came.
func (u usage) counts() (prompt, completion int) {
	ok := func(n int) int {
		if n < 0 || n > MaxReportedTokens {
			return 0
		}
		return n
	}
	return ok(u.PromptTokens), ok(u.CompletionTokens)
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

// Chat sends a chat completion and reads its answer (streamed or not),
// once, or under the client's retry policy.
func (c *Client) Chat(ctx context.Context, req ChatRequest) Result {
	return c.do(ctx, !req.Stream, func(ctx context.Context, n int) Result { return c.chatOnce(ctx, req, n) })
}

// chatOnce is attempt n of a chat completion (0: no retry policy).
func (c *Client) chatOnce(ctx context.Context, req ChatRequest, n int) (res Result) { // named: done (deferred) completes it
	body := chatBody{Model: req.Model, Messages: req.Messages, MaxTokens: req.MaxTokens, Stream: req.Stream,
		MinTokens: req.MinTokens, IgnoreEOS: req.IgnoreEOS}
	if req.Stream && req.IncludeUsage {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(body)
	if err != nil {
		c.fail(&res, ClassMalformed, fmt.Errorf("encoding chat request: %w", err))
		return res
	}
	cl := c.send(ctx, c.calls.get(), http.MethodPost, "/v1/chat/completions", b, withAttempt(req.Header, n), req.Stream, &res)
	if cl == nil {
		return res
	}
	defer c.done(cl, &res)
	if req.Stream && !isJSON(cl.resp.Header.Get("Content-Type")) {
		c.readStream(cl, &req, &res)
	} else {
		c.readCompletion(cl, &req, &res)
	}
	return res
}

func (c *Client) readCompletion(cl *call, req *ChatRequest, res *Result) {
	data, err := cl.readAll()
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
	if req.KeepText {
		res.Text = out.Choices[0].Message.Content
	}
	if out.Usage != nil {
		res.PromptTokens, res.CompletionTokens = out.Usage.counts()
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
