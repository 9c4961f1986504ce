package stack_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// doubled counts every token twice: a tokenizer no one would load by
// accident, so prompt_tokens show which one the stack used.
type doubled struct{ tokenizer.Tokenizer }

func (d doubled) Encode(text string) []int {
	ids := d.Tokenizer.Encode(text)
	return append(ids, ids...)
}

func (d doubled) Count(text string) int { return len(d.Encode(text)) }

// TestStackLoadsTokenizerThroughOptions: a stack given Options.LoadTokenizer
// asks it once for its config's spec and counts prompt_tokens with what it
// returned (the harness's cached tokenizer, not a second parse).
func TestStackLoadsTokenizerThroughOptions(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	load := func(spec string) (tokenizer.Tokenizer, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, spec)
		return doubled{tokenizer.Default()}, nil
	}
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 50
	cfg.Tokenizer = tokenizer.O200K
	s := startStack(t, cfg, stack.Options{LoadTokenizer: load})
	const prompt = "how many tokens are in this prompt"
	resp, body := post(t, s.URL()+"/v1/chat/completions",
		`{"model":"meta-llama/Llama-3.1-8B-Instruct","messages":[{"role":"user","content":"`+prompt+`"}],"max_tokens":4}`)
	var out struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s (%v)", resp.StatusCode, body, err)
	}
	if want := 2 * tokenizer.Default().Count(prompt); out.Usage.PromptTokens != want {
		t.Errorf("prompt_tokens %d, want %d (counted with the loaded tokenizer)", out.Usage.PromptTokens, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{tokenizer.O200K}) {
		t.Errorf("LoadTokenizer asked for %q, want the config's spec once", asked)
	}
}

// TestEmbedderCountsInTheEmbeddingTokenizer: with embedding_tokenizer the
// simulated embedder's usage.prompt_tokens is that tokenizer's count of
// each input (loaded through Options.LoadTokenizer), while the LLMs keep
// the config's tokenizer.
func TestEmbedderCountsInTheEmbeddingTokenizer(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	load := func(spec string) (tokenizer.Tokenizer, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, spec)
		return doubled{tokenizer.Default()}, nil
	}
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 50
	cfg.EmbeddingTokenizer = tokenizer.O200K
	s := startStack(t, cfg, stack.Options{LoadTokenizer: load})
	inputs := []string{"a sentence to embed", "and another, longer one with punctuation."}
	in, _ := json.Marshal(inputs)
	resp, body := post(t, s.URL()+"/v1/embeddings", `{"model":"BAAI/bge-small-en-v1.5","input":`+string(in)+`}`)
	var out struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("embeddings: %d %s (%v)", resp.StatusCode, body, err)
	}
	want := 0
	for _, s := range inputs {
		want += 2 * tokenizer.Default().Count(s)
	}
	if out.Usage.PromptTokens != want {
		t.Errorf("prompt_tokens %d, want %d (each input counted with the embedding tokenizer)", out.Usage.PromptTokens, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(asked, tokenizer.O200K) {
		t.Errorf("LoadTokenizer asked for %q, want the embedding tokenizer's spec", asked)
	}
}
