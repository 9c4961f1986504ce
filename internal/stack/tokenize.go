package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// maxTokenizeBody bounds a /tokenize request body.
const maxTokenizeBody = 8 << 20

// tokenizeRequest is vLLM's POST /tokenize body (SGLang's alike): a
// completion prompt, or chat messages rendered with the chat template.
type tokenizeRequest struct {
	Model               string                 `json:"model"`
	Prompt              *string                `json:"prompt"`
	Messages            []chattemplate.Message `json:"messages"`
	AddGenerationPrompt *bool                  `json:"add_generation_prompt"`
}

// tokenizeResponse is vLLM's answer.
type tokenizeResponse struct {
	Count       int   `json:"count"`
	Tokens      []int `json:"tokens"`
	MaxModelLen int   `json:"max_model_len"`
}

// tokenizeMaxModelLen is what the reference stack answers as
// max_model_len: its simulated engines take prompts of any length.
const tokenizeMaxModelLen = 1 << 20

// withTokenize serves POST /tokenize in vLLM's shape for the models of
// the stack's in-process simulated LLMs — their tokenizer and chat
// template, exactly what their usage's prompt_tokens counts — and hands
// every other request to h. A stack without such an engine has no
// /tokenize (h answers 404), as a server without one.
func (s *Stack) withTokenize(h http.Handler) http.Handler {
	models := s.simLLMModels()
	if len(models) == 0 {
		return h
	}
	var tpl *chattemplate.Template
	if s.cfg.ChatTemplate != "" {
		tpl, _ = chattemplate.Load(s.cfg.ChatTemplate) // checked by Config.Validate
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tokenize" || r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		status, body := s.tokenize(r.Body, models, tpl)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	})
}

// simLLMModels are the models of the in-process simulated LLM engines.
func (s *Stack) simLLMModels() map[string]bool {
	models := map[string]bool{}
	for _, ec := range s.cfg.Engines {
		if ec.Kind != string(engine.KindLLM) || ec.URL != "" || ec.Process {
			continue
		}
		if p, err := s.catalog.LLM(ec.Profile); err == nil {
			models[p.Model] = true
		}
	}
	return models
}

// tokenize answers one /tokenize body: the status and the JSON.
func (s *Stack) tokenize(body io.Reader, models map[string]bool, tpl *chattemplate.Template) (int, []byte) {
	b, err := io.ReadAll(io.LimitReader(body, maxTokenizeBody+1))
	if err != nil || len(b) > maxTokenizeBody {
		return tokenizeError(http.StatusRequestEntityTooLarge, "request_too_large", "a /tokenize body of at most %d bytes", maxTokenizeBody)
	}
	var req tokenizeRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&req); err != nil {
		return tokenizeError(http.StatusBadRequest, "invalid_json", "decoding the body: %v", err)
	}
	if !models[req.Model] {
		return tokenizeError(http.StatusNotFound, "model_not_found", "the model %q has no tokenizer here", req.Model)
	}
	tok, err := s.tokenizer()
	if err != nil {
		return tokenizeError(http.StatusInternalServerError, "tokenizer", "%v", err)
	}
	ids, err := tokenizeIDs(req, tpl, tok)
	if err != nil {
		return tokenizeError(http.StatusBadRequest, "invalid_request", "%v", err)
	}
	out, _ := json.Marshal(tokenizeResponse{Count: len(ids), Tokens: ids, MaxModelLen: tokenizeMaxModelLen})
	return http.StatusOK, out
}

// tokenizeIDs are the token IDs the engines count for req: the prompt
// as it is, or the messages rendered with the template
// (add_generation_prompt, true unless set false), or without a template
// each message's content in turn, as the simulated engines count them.
func tokenizeIDs(req tokenizeRequest, tpl *chattemplate.Template, tok tokenizer.Tokenizer) ([]int, error) {
	ids := []int{}
	switch {
	case req.Prompt != nil && req.Messages != nil:
		return nil, fmt.Errorf("give prompt or messages, not both")
	case req.Prompt != nil:
		return append(ids, tok.Encode(*req.Prompt)...), nil
	case req.Messages == nil:
		return nil, fmt.Errorf("give prompt or messages")
	case tpl != nil:
		text, err := tpl.Render(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
		if err != nil {
			return nil, err
		}
		return append(ids, tok.Encode(text)...), nil
	}
	for _, m := range req.Messages {
		ids = append(ids, tok.Encode(m.Content)...)
	}
	return ids, nil
}

func tokenizeError(status int, code, format string, args ...any) (int, []byte) {
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"message": fmt.Sprintf(format, args...), "type": "invalid_request_error", "code": code}})
	return status, out
}
