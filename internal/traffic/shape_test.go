package traffic_test

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/traffic"
)

func TestShapeBounds(t *testing.T) {
	ok := traffic.LLMShape{Model: "m", MaxTokens: 32, PromptWords: 64}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"fine", ok.Validate("q2.llm"), ""},
		{"a typo of a hundred million words", traffic.LLMShape{Model: "m", MaxTokens: 1, PromptWords: 100_000_000}.Validate("q2.llm"), "q2.llm.prompt_words 100000000"},
		{"no model", traffic.LLMShape{MaxTokens: 1, PromptWords: 1}.Validate("q3.llm"), "q3.llm.model"},
		{"embedding inputs", traffic.EmbedShape{Model: "e", Inputs: 1 << 20, Words: 1}.Validate("q2.embedding"), "q2.embedding.inputs"},
		{"embedding words", traffic.EmbedShape{Model: "e", Inputs: 1, Words: 0}.Validate("q2.embedding"), "q2.embedding.words"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.want == "") != (tc.err == nil) || (tc.err != nil && !strings.Contains(tc.err.Error(), tc.want)) {
				t.Errorf("err %v, want %q", tc.err, tc.want)
			}
		})
	}
}
