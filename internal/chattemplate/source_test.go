package chattemplate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceRoundTrip: a template's Source, through JSON (a --nodes
// plan), parses into a template that renders every message list as the
// original does; an oversized source is refused.
func TestSourceRoundTrip(t *testing.T) {
	for _, file := range []string{"llama3.tokenizer_config.json", "qwen2.5.tokenizer_config.json", "mistral.tokenizer_config.json", "gemma3.tokenizer_config.json"} {
		t.Run(file, func(t *testing.T) {
			orig, err := Load(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(orig.Source())
			if err != nil {
				t.Fatal(err)
			}
			var src Source
			if err := json.Unmarshal(b, &src); err != nil {
				t.Fatal(err)
			}
			again, err := src.Parse()
			if err != nil {
				t.Fatal(err)
			}
			for _, msgs := range [][]Message{
				{{Role: "user", Content: "Hello!"}},
				{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello."}, {Role: "user", Content: "Bye"}},
			} {
				want, err1 := orig.Render(msgs, true)
				got, err2 := again.Render(msgs, true)
				if err1 != nil || err2 != nil || got != want {
					t.Errorf("rendered %q (%v), want %q (%v)", got, err2, want, err1)
				}
			}
		})
	}
	big := Source{Name: "big", Jinja: strings.Repeat("x", maxConfigBytes+1)}
	if _, err := big.Parse(); err == nil {
		t.Error("an oversized template parsed")
	}
}
