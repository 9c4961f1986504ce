package shape

import (
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// TestFitChatTemplated: with each fixture model's tokenizer and chat
// template, the fitted conversation — with and without a system prompt —
// renders to exactly the intended number of tokens, counted the way
// transformers' apply_chat_template does (the same rendering and
// tokenizer are checked against it in package chattemplate).
func TestFitChatTemplated(t *testing.T) {
	for _, model := range []string{"llama3", "qwen2.5"} {
		t.Run(model, func(t *testing.T) {
			dir := filepath.Join("..", "chattemplate", "testdata")
			tok, err := tokenizer.Load(filepath.Join(dir, model+".tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := chattemplate.Load(filepath.Join(dir, model+".tokenizer_config.json"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSynth(tok)
			if err != nil {
				t.Fatal(err)
			}
			s = s.WithTemplate(tpl)
			for seed := uint64(0); seed < 60; seed++ {
				n := 120 + int(seed)*37
				msgs := []chattemplate.Message{{Role: "user"}}
				if seed%2 == 0 {
					msgs = []chattemplate.Message{{Role: "system", Content: s.Block(seed, 20)}, {Role: "user"}}
				}
				got, ok, err := s.FitChat(msgs, n, seed)
				if err != nil || !ok || got != n {
					t.Fatalf("seed %d, n %d: %d tokens (ok %v, %v)", seed, n, got, ok, err)
				}
				text, _ := tpl.Render(msgs, true)
				if c := tok.Count(text); c != n {
					t.Fatalf("seed %d: the rendered prompt counts %d, want %d", seed, c, n)
				}
			}
			msgs := []chattemplate.Message{{Role: "user"}}
			if got, ok, _ := s.FitChat(msgs, 2, 1); ok || got <= 2 {
				t.Fatalf("n below the template's own tokens: %d, ok %v; want the shortest prompt, not ok", got, ok)
			}
		})
	}
}
