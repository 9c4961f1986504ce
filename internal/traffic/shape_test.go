package traffic_test

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
)

func TestShapeBounds(t *testing.T) {
	llm := func(s traffic.LLMShape) func(string) error { return s.Validate }
	emb := func(s traffic.EmbedShape) func(string) error { return s.Validate }
	for _, tc := range []struct {
		name     string
		validate func(string) error
		key      string
		want     string
	}{
		{"fine", llm(traffic.LLMShape{Model: "m", MaxTokens: 32, PromptWords: 64}), "q2.llm", ""},
		{"tokens", llm(traffic.LLMShape{Model: "m", Shape: shape.Shape{InputTokens: shape.FixedDist(64), OutputTokens: shape.Dist{Kind: shape.Uniform, Min: 1, Max: 9}}}), "q2.llm", ""},
		{"a typo of a hundred million words", llm(traffic.LLMShape{Model: "m", MaxTokens: 1, PromptWords: 100_000_000}), "q2.llm", "q2.llm.prompt_words 100000000"},
		{"no model", llm(traffic.LLMShape{MaxTokens: 1, PromptWords: 1}), "q3.llm", "q3.llm.model"},
		{"no lengths", llm(traffic.LLMShape{Model: "m"}), "q3.llm", "q3.llm: input_tokens and output_tokens"},
		{"bad dist", llm(traffic.LLMShape{Model: "m", MaxTokens: 1, Shape: shape.Shape{InputTokens: shape.Dist{Kind: shape.Uniform}}}), "q3.llm", "q3.llm.input_tokens: uniform needs max"},
		{"embedding inputs", emb(traffic.EmbedShape{Model: "e", Inputs: 1 << 20, Words: 1}), "q2.embedding", "q2.embedding.inputs"},
		{"embedding words", emb(traffic.EmbedShape{Model: "e", Inputs: 1, Words: 0}), "q2.embedding", "q2.embedding.words"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.validate(tc.key)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAliasesFold: prompt_words and max_tokens become input_tokens and
// output_tokens, and win over them (a file that sets them means them).
func TestAliasesFold(t *testing.T) {
	s := traffic.LLMShape{Model: "m", PromptWords: 100, MaxTokens: 7, Shape: shape.Shape{InputTokens: shape.FixedDist(5), OutputTokens: shape.FixedDist(5)}}
	if err := s.Validate("q2.llm"); err != nil {
		t.Fatal(err)
	}
	if s.InputTokens.Value != 100 || s.OutputTokens.Value != 7 || s.InputTokens.Kind != shape.Fixed || s.PromptWords != 0 || s.MaxTokens != 0 {
		t.Errorf("after Validate: %+v", s)
	}
	items := []traffic.Item{{Type: "llm", Text: 1}, {Type: "embedding", Text: 2}}
	s.Fill(items)
	if items[0].In != 100 || items[0].Out != 7 || items[1].In != 0 {
		t.Errorf("filled %+v", items)
	}
}
