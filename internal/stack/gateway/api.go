package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/sched"
)

// chatRequest is the subset of OpenAI's chat completion request the
// gateway acts on; other fields (temperature, ...) are accepted and ignored.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Stream              bool          `json:"stream"`
	StreamOptions       *streamOpts   `json:"stream_options"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	// N is OpenAI's number of choices: only 1 is served (checkN), never
	// silently fewer than asked.
	N json.RawMessage `json:"n"`
}

// checkN accepts n absent, null or 1 (in any JSON spelling of the number
// one) and answers anything else 400: the stack returns one choice.
func (r *chatRequest) checkN() *apiError {
	if len(r.N) == 0 || string(r.N) == "null" {
		return nil
	}
	if v, err := strconv.ParseFloat(string(r.N), 64); err == nil && v == 1 {
		return nil
	}
	shown := string(r.N)
	if len(shown) > 32 {
		shown = shown[:32] + "…"
	}
	return badRequest("invalid_value", "field n: %s: only n = 1 is supported (one choice per request); send n requests instead", shown)
}

type streamOpts struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
}

type retrieveRequest struct {
	Model     string    `json:"model"`
	Embedding []float32 `json:"embedding"`
	Input     *string   `json:"input"`
	TopK      *int      `json:"top_k"`
}

// decodeJSON reads one JSON document from r into v, mapping failures to
// 400 (naming the field where the decoder knows it) or 413.
func decodeJSON(r io.Reader, v any) *apiError {
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return badRequest("invalid_json", "request body: unexpected data after the JSON object")
	}
	return nil
}

func decodeError(err error) *apiError {
	var tooBig *http.MaxBytesError
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &tooBig):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "body_too_large",
			Message: fmt.Sprintf("request body larger than %d bytes (limits.max_body_bytes)", tooBig.Limit)}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "request body"
		}
		return badRequest("invalid_type", "field %s: got JSON %s, want %s", field, typ.Value, typ.Type)
	case errors.As(err, &syn):
		return badRequest("invalid_json", "malformed JSON at byte %d: %v", syn.Offset, err)
	case errors.Is(err, io.EOF):
		return badRequest("invalid_json", "request body is empty; send a JSON object")
	}
	return badRequest("invalid_json", "malformed JSON: %v", err)
}

// renderPrompt flattens messages into the prompt an engine sees, and
// returns them with their text.
func renderPrompt(msgs []chatMessage) (string, []engine.Message, *apiError) {
	if len(msgs) == 0 {
		return "", nil, badRequest("invalid_value", "field messages: must hold at least one message")
	}
	var b strings.Builder
	out := make([]engine.Message, len(msgs))
	for i, m := range msgs {
		if m.Role == "" {
			return "", nil, badRequest("invalid_value", "field messages[%d].role: required", i)
		}
		text, err := messageText(m.Content)
		if err != nil {
			return "", nil, badRequest("invalid_type", "field messages[%d].content: %v", i, err)
		}
		out[i] = engine.Message{Role: m.Role, Content: text}
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(text)
		b.WriteByte('\n')
	}
	return b.String(), out, nil
}

func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of {\"type\":\"text\",\"text\":...} parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part type %q not supported (want text)", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// maxTokens resolves max_completion_tokens / max_tokens against the limit.
func (r *chatRequest) maxTokens(def, limit int) (int, *apiError) {
	n, field := r.MaxCompletionTokens, "max_completion_tokens"
	if n == nil {
		n, field = r.MaxTokens, "max_tokens"
	}
	if n == nil {
		return min(def, limit), nil
	}
	if *n <= 0 {
		return 0, badRequest("invalid_value", "field %s: %d must be ≥ 1", field, *n)
	}
	if *n > limit {
		return 0, badRequest("invalid_value", "field %s: %d exceeds the limit %d (limits.max_tokens)", field, *n, limit)
	}
	return *n, nil
}

// embeddingInputs accepts a string or a list of strings.
func embeddingInputs(raw json.RawMessage, maxInputs int) ([]string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("invalid_value", "field input: required (a string or a list of strings)")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, badRequest("invalid_value", "field input: must not be empty")
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badRequest("invalid_type", "field input: want a string or a list of strings")
	}
	if len(many) == 0 {
		return nil, badRequest("invalid_value", "field input: list must not be empty")
	}
	if len(many) > maxInputs {
		return nil, badRequest("invalid_value", "field input: %d inputs exceed the limit %d", len(many), maxInputs)
	}
	for i, s := range many {
		if s == "" {
			return nil, badRequest("invalid_value", "field input[%d]: must not be empty", i)
		}
	}
	return many, nil
}

// meta is what the gateway reads from request headers.
type meta struct {
	Tenant   string
	Priority sched.Priority
	Deadline time.Duration
	Type     string
}

const maxTenantLen = 128

func parseMeta(h http.Header, defType string) (meta, *apiError) {
	m := meta{Tenant: h.Get(protocol.HeaderTenant), Type: h.Get(protocol.HeaderType)}
	if len(m.Tenant) > maxTenantLen {
		return m, badRequest("invalid_header", "header X-Tenant-Id: longer than %d bytes", maxTenantLen)
	}
	if !utf8.ValidString(m.Tenant) {
		m.Tenant = ""
		return m, badRequest("invalid_header", "header X-Tenant-Id: not valid UTF-8")
	}
	p, err := sched.ParsePriority(strings.ToLower(strings.TrimSpace(h.Get(protocol.HeaderPriority))))
	if err != nil {
		return m, badRequest("invalid_header", "header X-Request-Priority: %v", err)
	}
	m.Priority = p
	if v := strings.TrimSpace(h.Get(protocol.HeaderDeadline)); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 || ms > int64(protocol.MaxDeadline/time.Millisecond) {
			return m, badRequest("invalid_header", "header X-SLO-Deadline-Ms: %q is not a whole number of milliseconds in [0, 86400000]", v)
		}
		m.Deadline = time.Duration(ms) * time.Millisecond
	}
	if m.Type == "" {
		m.Type = defType
	}
	return m, nil
}

// typeLabel bounds the X-Request-Type metric label.
func typeLabel(t string) string {
	switch t {
	case "llm", "embedding", "retrieve", "rag", "chat":
		return t
	}
	return "other"
}
