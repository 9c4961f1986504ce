package target

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/redact"
)

// maxTokenizeAnswer bounds a /tokenize answer (the token IDs of a prompt
// of a few thousand tokens are some tens of kB).
const maxTokenizeAnswer = 1 << 20

// NoTokenizeError says the target has no POST /tokenize (or refuses it
// for the model): tokenizer: server cannot be used with it.
type NoTokenizeError struct {
	Target string // secret-free
	Model  string
	Status string // the answer's status, or the transport error
}

func (e *NoTokenizeError) Error() string {
	return fmt.Sprintf("tokenizer: server needs POST /tokenize (vLLM's, counting prompts and chat messages) on the target, and %s answered %s for model %s; give tokenizer: (the model's tokenizer.json) and chat_template: instead",
		e.Target, e.Status, e.Model)
}

// noTokenize are the statuses of a target without a usable /tokenize:
// none (404, 405, 501), or one that does not take the request's form (a
// /tokenize of prompts only refusing chat messages: 400, 422).
var noTokenize = map[int]bool{http.StatusNotFound: true, http.StatusMethodNotAllowed: true, http.StatusNotImplemented: true,
	http.StatusBadRequest: true, http.StatusUnprocessableEntity: true}

// tokenizeBody is vLLM's POST /tokenize request: a prompt, or chat
// messages rendered with the model's chat template.
type tokenizeBody struct {
	Model               string                 `json:"model"`
	Prompt              *string                `json:"prompt,omitempty"`
	Messages            []chattemplate.Message `json:"messages,omitempty"`
	AddGenerationPrompt *bool                  `json:"add_generation_prompt,omitempty"`
}

// CountPrompt is the target's POST /tokenize count of text as a
// completion prompt (with whatever special tokens it adds to one).
func (t *Target) CountPrompt(ctx context.Context, model, text string) (int, error) {
	return t.tokenize(ctx, tokenizeBody{Model: model, Prompt: &text})
}

// CountMessages is the target's POST /tokenize count of msgs rendered
// with the model's chat template (add_generation_prompt), as a chat
// completion's prompt_tokens.
func (t *Target) CountMessages(ctx context.Context, model string, msgs []chattemplate.Message) (int, error) {
	gen := true
	return t.tokenize(ctx, tokenizeBody{Model: model, Messages: msgs, AddGenerationPrompt: &gen})
}

func (t *Target) tokenize(ctx context.Context, body tokenizeBody) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	resp, err := t.do(ctx, http.MethodPost, "/tokenize", bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("POST /tokenize: %w", err)
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenizeAnswer+1))
	switch {
	case noTokenize[resp.StatusCode]:
		return 0, &NoTokenizeError{Target: t.desc, Model: body.Model, Status: statusOf(resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("POST /tokenize: %s", statusOf(resp.StatusCode))
	case err != nil:
		return 0, fmt.Errorf("POST /tokenize: reading the answer: %w", err)
	case len(ans) > maxTokenizeAnswer:
		return 0, fmt.Errorf("POST /tokenize: an answer larger than %d bytes", maxTokenizeAnswer)
	}
	return decodeTokenize(ans)
}

// decodeTokenize reads vLLM's answer: its count, which must agree with
// its tokens when it sends them.
func decodeTokenize(ans []byte) (int, error) {
	var out struct {
		Count  *int  `json:"count"`
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(ans, &out); err != nil {
		// encoding/json quotes a bad number whole: the peer's text, clipped
		return 0, fmt.Errorf("POST /tokenize: the answer is not vLLM's {\"count\": n, \"tokens\": [...]}: %s", redact.Clip(err.Error(), 160))
	}
	switch {
	case out.Count == nil:
		return 0, errors.New("POST /tokenize: the answer has no count")
	case *out.Count < 0 || *out.Count > openai.MaxReportedTokens:
		return 0, fmt.Errorf("POST /tokenize: a count of %d (want 0 to %d)", *out.Count, openai.MaxReportedTokens)
	case out.Tokens != nil && len(out.Tokens) != *out.Count:
		return 0, fmt.Errorf("POST /tokenize: a count of %d beside %d tokens", *out.Count, len(out.Tokens))
	}
	return *out.Count, nil
}

// statusOf is a status as Go names it: never the peer's own reason
// phrase, which is unbounded text from the target.
func statusOf(code int) string { return strconv.Itoa(code) + " " + http.StatusText(code) }
