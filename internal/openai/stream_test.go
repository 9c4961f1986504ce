package openai

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawStream answers every chat with body as an event stream.
func rawStream(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

func events(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

const (
	reasonChunk = `{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"hmm"},"finish_reason":null}]}`
	answerChunk = `{"choices":[{"index":0,"delta":{"content":"yes"},"finish_reason":null}]}`
	finalChunk  = `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	usageChunk  = `{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":50}}`
)

// TestChatStreamShapes: how the streams real servers send are read.
func TestChatStreamShapes(t *testing.T) {
	tests := []struct {
		name                  string
		body                  string
		wantClass, wantNote   string
		tokens, answerAt      int // TokenCount; index in Tokens of the first answer token (-1: none)
		completion, maxTokens int
		wantText              string
	}{
		{"vLLM reasoning model: TTFT at the first reasoning token, TTFAT at the first answer",
			events(reasonChunk, reasonChunk, reasonChunk, answerChunk, answerChunk, finalChunk, usageChunk, "[DONE]"),
			"", "", 5, 3, 50, 0, "yesyes"},
		{"newer vLLM: delta.reasoning",
			events(`{"choices":[{"delta":{"reasoning":"r"}}]}`, answerChunk, "[DONE]"), "", "", 2, 1, 2, 0, "yes"},
		{"reasoning only, cut by max_tokens",
			events(reasonChunk, reasonChunk, `{"choices":[{"delta":{},"finish_reason":"length"}]}`, "[DONE]"), "", "", 2, -1, 2, 0, ""},
		{"TGI / older llama.cpp: finish_reason and usage, no [DONE]",
			events(answerChunk, answerChunk, `{"choices":[{"delta":{"content":"!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":3}}`),
			"", NoteNoDone, 3, 0, 3, 0, "yesyes!"},
		{"finish_reason in its own chunk, no [DONE]", events(answerChunk, finalChunk), "", NoteNoDone, 1, 0, 1, 0, "yes"},
		{"no finish_reason, no [DONE]: truncated", events(answerChunk, answerChunk), ClassTruncated, "", 2, 0, 0, 0, "yesyes"},
		{"cut inside the line after finish_reason: truncated", events(answerChunk, finalChunk) + `data: {"choi`, ClassTruncated, "", 1, 0, 0, 0, "yes"},
		{"more tokens than max_tokens: times bounded, the excess counted",
			events(append(repeat(answerChunk, 200), "[DONE]")...), "", "", 200, 0, 200, 10, strings.Repeat("yes", 200)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, rawStream(tc.body), Config{})
			res := c.Chat(context.Background(), ChatRequest{Model: "m", Stream: true, KeepText: true, MaxTokens: tc.maxTokens})
			if res.ErrClass != tc.wantClass || res.Note != tc.wantNote {
				t.Fatalf("class %q note %q (err %v), want class %q note %q", res.ErrClass, res.Note, res.Err, tc.wantClass, tc.wantNote)
			}
			if res.TokenCount != tc.tokens || res.Text != tc.wantText {
				t.Errorf("%d tokens, text %q; want %d, %q", res.TokenCount, res.Text, tc.tokens, tc.wantText)
			}
			if tc.wantClass == "" && res.CompletionTokens != tc.completion {
				t.Errorf("completion tokens %d, want %d", res.CompletionTokens, tc.completion)
			}
			checkTokenTimes(t, &res, tc.answerAt, tc.maxTokens)
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// checkTokenTimes: TTFT is the first token of any kind, TTFAT the first
// answer token, the kept times are bounded and the rest counted, and the
// time per token comes from the timed tokens only.
func checkTokenTimes(t *testing.T, res *Result, answerAt, maxTokens int) {
	t.Helper()
	if res.TokenCount == 0 {
		return
	}
	if !res.FirstToken.Equal(res.Tokens[0]) {
		t.Errorf("FirstToken %v is not the first token's time %v", res.FirstToken, res.Tokens[0])
	}
	switch {
	case answerAt < 0 && !res.FirstAnswerToken.IsZero():
		t.Errorf("FirstAnswerToken %v set without an answer token", res.FirstAnswerToken)
	case answerAt >= 0 && !res.FirstAnswerToken.Equal(res.Tokens[answerAt]):
		t.Errorf("FirstAnswerToken %v is not token %d's time", res.FirstAnswerToken, answerAt)
	}
	if maxTokens > 0 && len(res.Tokens) > tokenTimesCap(&ChatRequest{MaxTokens: maxTokens}) {
		t.Errorf("%d token times kept for max_tokens %d", len(res.Tokens), maxTokens)
	}
	if len(res.Tokens)+res.TokensDropped != res.TokenCount {
		t.Errorf("%d kept + %d dropped != %d tokens", len(res.Tokens), res.TokensDropped, res.TokenCount)
	}
	if res.TokenCount > 1 {
		want := res.Tokens[len(res.Tokens)-1].Sub(res.Tokens[0]) / time.Duration(res.TokenCount-1)
		if got := res.TimePerToken(); got != want {
			t.Errorf("TimePerToken %v, want %v", got, want)
		}
	}
}

// TestStreamTextNotKept: without KeepText a stream keeps no text, and
// the decoder allocates nothing per token.
func TestStreamTextNotKept(t *testing.T) {
	body := []byte(events(append(repeat(answerChunk, 2000), "[DONE]")...))
	c := &Client{cfg: Config{}.withDefaults()}
	read := func() Result {
		var res Result
		cl := &call{ctx: context.Background(), body: &chunkedReader{data: body, size: 4096}}
		c.readStream(cl, &ChatRequest{MaxTokens: 2000}, &res)
		return res
	}
	if res := read(); res.Err != nil || res.Text != "" || res.TokenCount != 2000 {
		t.Fatalf("err %v, text %d bytes, %d tokens; want ok, no text, 2000", res.Err, len(res.Text), res.TokenCount)
	}
	if allocs := testing.AllocsPerRun(5, func() { read() }); allocs > 20 {
		t.Errorf("%.0f allocations for a 2,000-token stream; want a handful per stream, none per token", allocs)
	}
}
