package traffic

import "fmt"

// Upper bounds on request shapes: far beyond any model's context, and low
// enough that a typo cannot make the harness build gigabytes of prompts.
const (
	MaxPromptWords = 200_000 // ~250k tokens, above the largest contexts served
	MaxTokens      = 1 << 20
	MaxInputs      = 4096 // texts per embedding request
	MaxInputWords  = 100_000
)

// Validate checks s under the config key key (e.g. "q2.llm").
func (s LLMShape) Validate(key string) error {
	switch {
	case s.Model == "":
		return fmt.Errorf("%s.model must be set", key)
	case s.MaxTokens < 1 || s.MaxTokens > MaxTokens:
		return fmt.Errorf("%s.max_tokens %d: must be in [1, %d]", key, s.MaxTokens, MaxTokens)
	case s.PromptWords < 1 || s.PromptWords > MaxPromptWords:
		return fmt.Errorf("%s.prompt_words %d: must be in [1, %d]", key, s.PromptWords, MaxPromptWords)
	}
	return nil
}

// Validate checks s under the config key key (e.g. "q2.embedding").
func (s EmbedShape) Validate(key string) error {
	switch {
	case s.Model == "":
		return fmt.Errorf("%s.model must be set", key)
	case s.Inputs < 1 || s.Inputs > MaxInputs:
		return fmt.Errorf("%s.inputs %d: must be in [1, %d]", key, s.Inputs, MaxInputs)
	case s.Words < 1 || s.Words > MaxInputWords:
		return fmt.Errorf("%s.words %d: must be in [1, %d]", key, s.Words, MaxInputWords)
	}
	return nil
}
