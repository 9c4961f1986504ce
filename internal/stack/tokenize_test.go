package stack_test

import (
	"encoding/json"
	"testing"

	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// TestTokenize: POST /tokenize counts as the simulated LLMs count
// usage.prompt_tokens — the same messages give the same number — and
// answers a prompt, an unknown model and bad bodies in vLLM's shape.
func TestTokenize(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 50
	s := startStack(t, cfg, stack.Options{LoadTokenizer: func(string) (tokenizer.Tokenizer, error) { return doubled{tokenizer.Default()}, nil }})
	const model = "meta-llama/Llama-3.1-8B-Instruct"
	msgs := `[{"role":"system","content":"be brief"},{"role":"user","content":"how many tokens are in this prompt"}]`
	_, body := post(t, s.URL()+"/v1/chat/completions", `{"model":"`+model+`","messages":`+msgs+`,"max_tokens":2}`)
	var chat struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &chat); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		body   string
		status int
		count  int
	}{
		{"messages", `{"model":"` + model + `","messages":` + msgs + `,"add_generation_prompt":true}`, 200, chat.Usage.PromptTokens},
		{"prompt", `{"model":"` + model + `","prompt":"how many"}`, 200, 2 * tokenizer.Default().Count("how many")},
		{"empty prompt", `{"model":"` + model + `","prompt":""}`, 200, 0},
		{"unknown model", `{"model":"other","prompt":"x"}`, 404, 0},
		{"embedding model", `{"model":"BAAI/bge-small-en-v1.5","prompt":"x"}`, 404, 0},
		{"both", `{"model":"` + model + `","prompt":"x","messages":[]}`, 400, 0},
		{"neither", `{"model":"` + model + `"}`, 400, 0},
		{"bad JSON", `{"model":`, 400, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, s.URL()+"/tokenize", tc.body)
			var out struct {
				Count  int   `json:"count"`
				Tokens []int `json:"tokens"`
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != 200 {
				return
			}
			if err := json.Unmarshal(body, &out); err != nil || out.Count != tc.count || len(out.Tokens) != out.Count {
				t.Errorf("%s: count %d (%d tokens), want %d (%v)", body, out.Count, len(out.Tokens), tc.count, err)
			}
		})
	}
}
