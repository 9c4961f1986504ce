package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// jstr is a JSON string value as read: its bytes when plain (b is the
// text), or the quoted JSON text when it holds escapes or invalid UTF-8
// (decoded only when the text is wanted). It points into the chunk's data.
type jstr struct {
	b      []byte
	quoted bool
}

func (s jstr) empty() bool { return len(s.b) == 0 || s.quoted && len(s.b) <= 2 }

// text returns the decoded string (allocates; only when the text is wanted).
func (s jstr) text() string {
	if !s.quoted {
		return string(s.b)
	}
	var out string
	if json.Unmarshal(s.b, &out) != nil {
		return ""
	}
	return out
}

// choice is what one choice of a stream chunk carries.
type choice struct {
	content, reasoningContent, reasoning jstr
	finish                               bool // a non-empty finish_reason
}

// reasoningText is the reasoning delta: vLLM's reasoning_content, or the
// newer "reasoning" field.
func (c *choice) reasoningText() jstr {
	if !c.reasoningContent.empty() {
		return c.reasoningContent
	}
	return c.reasoning
}

// chunk is one decoded chat.completion.chunk (only what we read). It is
// reused from chunk to chunk of a stream.
type chunk struct {
	choices  []choice
	usage    usage
	hasUsage bool
	err      []byte // the raw "error" member, if any
}

func (ch *chunk) reset() {
	ch.choices, ch.usage, ch.hasUsage, ch.err = ch.choices[:0], usage{}, false, nil
}

// jsonChunk is the encoding/json form of a chunk (the slow path).
type jsonChunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// decodeChunk decodes a stream chunk: fastChunk, else encoding/json.
func decodeChunk(data []byte, ch *chunk) error {
	if fastChunk(data, ch) {
		return nil
	}
	ch.reset()
	var j jsonChunk
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	for _, c := range j.Choices {
		ch.choices = append(ch.choices, choice{content: jstr{b: []byte(c.Delta.Content)},
			reasoningContent: jstr{b: []byte(c.Delta.ReasoningContent)}, reasoning: jstr{b: []byte(c.Delta.Reasoning)},
			finish: c.FinishReason != nil && *c.FinishReason != ""})
	}
	if j.Usage != nil {
		ch.usage, ch.hasUsage = *j.Usage, true
	}
	ch.err = j.Error
	return nil
}

// Bounds of the token timestamps a streamed Result keeps.
const (
	// DefaultMaxTokenTimes bounds Result.Tokens when the request sets no
	// max_tokens.
	DefaultMaxTokenTimes = 100_000
	// tokenTimesMargin is added to max_tokens: a target may split a token
	// into several deltas (a multi-byte character, say).
	tokenTimesMargin = 64
)

// tokenTimesCap is how many token timestamps a stream of req keeps.
func tokenTimesCap(req *ChatRequest) int {
	if req.MaxTokens <= 0 {
		return DefaultMaxTokenTimes
	}
	return min(req.MaxTokens+req.MaxTokens/4+tokenTimesMargin, DefaultMaxTokenTimes)
}

// initialTokenTimes sizes Result.Tokens up front: max_tokens (+1: a
// target may stream one more delta) up to 1,024, growing beyond.
func initialTokenTimes(req *ChatRequest) int {
	if req.MaxTokens <= 0 {
		return 64
	}
	return min(req.MaxTokens+1, 1024)
}

// stream is the state of one streamed chat being read.
type stream struct {
	req      *ChatRequest
	ch       chunk
	text     []byte // the answer, when req.KeepText
	capTimes int
	finished bool // a choice reported its finish_reason
}

var doneData = []byte("[DONE]")

// readStream consumes an SSE chat stream up to [DONE] (or to a clean end
// after a finish_reason). It keeps the token timestamps (bounded), the
// counts and, only when asked, the answer text.
func (c *Client) readStream(cl *call, req *ChatRequest, res *Result) {
	sr := NewSSEReader(cl.body, c.cfg.MaxLineBytes)
	sr.grow = cl.charge
	st := &stream{req: req, capTimes: tokenTimesCap(req)}
	res.Tokens = make([]time.Time, 0, initialTokenTimes(req))
	defer func() {
		if req.KeepText {
			res.Text = string(st.text)
		}
		if res.CompletionTokens == 0 && res.Err == nil {
			res.CompletionTokens = res.TokenCount
		}
	}()
	for {
		ev, err := sr.Next()
		if err != nil {
			c.streamEnd(cl, st, res, err)
			return
		}
		if bytes.Equal(ev.Data, doneData) {
			res.End = time.Now()
			return
		}
		if ev.Name == "error" {
			c.fail(res, ClassStreamError, fmt.Errorf("error event in stream: %s", c.excerpt(ev.Data, 200)))
			return
		}
		if !c.applyChunk(ev.Data, st, res) {
			return
		}
	}
}

// NoteNoDone is Result.Note of a stream that ended cleanly after its
// finish_reason without "data: [DONE]" (older llama.cpp, TGI): it is
// complete.
const NoteNoDone = "stream ended after finish_reason without [DONE]"

func (c *Client) streamEnd(cl *call, st *stream, res *Result, err error) {
	switch {
	case errors.Is(err, io.EOF) && st.finished:
		res.End = time.Now()
		res.addNote(NoteNoDone)
	case errors.Is(err, io.EOF):
		c.fail(res, ClassTruncated, fmt.Errorf("stream ended without [DONE] or a finish_reason after %d tokens", res.TokenCount))
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.fail(res, ClassTruncated, fmt.Errorf("stream cut inside a line after %d tokens", res.TokenCount))
	default:
		c.readErr(cl, res, err)
	}
}

// applyChunk decodes one data payload; it returns false after a failure.
func (c *Client) applyChunk(data []byte, st *stream, res *Result) bool {
	if err := decodeChunk(data, &st.ch); err != nil {
		c.fail(res, ClassMalformed, fmt.Errorf("decoding stream chunk %d: %w (data starts %q)", res.TokenCount, err, c.excerpt(data, 64)))
		return false
	}
	if errFromTarget(st.ch.err) {
		c.fail(res, ClassStreamError, fmt.Errorf("target reported an error in the stream: %s", c.excerpt(st.ch.err, 200)))
		return false
	}
	for i := range st.ch.choices {
		ch := &st.ch.choices[i]
		st.finished = st.finished || ch.finish
		if !ch.reasoningText().empty() {
			st.token(res, time.Now(), false)
		}
		if !ch.content.empty() {
			now := time.Now()
			st.token(res, now, true)
			st.answer(ch.content, now)
		}
	}
	if st.ch.hasUsage {
		res.PromptTokens, res.CompletionTokens = st.ch.usage.counts()
	}
	return true
}

// token times one token of any kind (answer or reasoning). Past capTimes
// timestamps the last slot holds the latest token and TokensDropped
// counts the ones overwritten.
func (st *stream) token(res *Result, now time.Time, answer bool) {
	if res.FirstToken.IsZero() {
		res.FirstToken = now
	}
	if answer && res.FirstAnswerToken.IsZero() {
		res.FirstAnswerToken = now
	}
	res.TokenCount++
	if len(res.Tokens) < st.capTimes {
		res.Tokens = append(res.Tokens, now)
		return
	}
	res.Tokens[len(res.Tokens)-1] = now
	res.TokensDropped++
}

// answer hands an answer delta to KeepText and OnToken, decoding it only
// for them.
func (st *stream) answer(s jstr, now time.Time) {
	if !st.req.KeepText && st.req.OnToken == nil {
		return
	}
	if !s.quoted && st.req.OnToken == nil {
		st.text = append(st.text, s.b...)
		return
	}
	t := s.text()
	if st.req.KeepText {
		st.text = append(st.text, t...)
	}
	if st.req.OnToken != nil {
		st.req.OnToken(now, t)
	}
}
