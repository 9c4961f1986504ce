package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Weighted is a value drawn with a relative weight.
type Weighted struct {
	Name   string  `yaml:"name" json:"name"`
	Weight float64 `yaml:"weight" json:"weight"`
}

// Pick draws one name of ws by weight (ws validated, total > 0).
func Pick(rng *rand.Rand, ws []Weighted) string {
	total := 0.0
	for _, w := range ws {
		total += w.Weight
	}
	u := rng.Float64() * total
	for _, w := range ws {
		if u < w.Weight {
			return w.Name
		}
		u -= w.Weight
	}
	return ws[len(ws)-1].Name
}

// ValidateWeights checks ws under the config key key: non-empty, named,
// finite weights ≥ 0 summing above 0, names in allowed when it is not nil.
func ValidateWeights(key string, ws []Weighted, allowed []string) error {
	if len(ws) == 0 {
		return fmt.Errorf("%s is empty; give at least one {name, weight}", key)
	}
	total := 0.0
	for _, w := range ws {
		if w.Name == "" || math.IsNaN(w.Weight) || math.IsInf(w.Weight, 0) || w.Weight < 0 {
			return fmt.Errorf("%s: each entry needs a name and a finite weight ≥ 0", key)
		}
		if allowed != nil && !slices.Contains(allowed, w.Name) {
			return fmt.Errorf("%s: unknown name %q; use %s", key, w.Name, strings.Join(allowed, ", "))
		}
		total += w.Weight
	}
	if total <= 0 {
		return fmt.Errorf("%s: weights sum to 0; give at least one a positive weight", key)
	}
	return nil
}

// LLMShape is the shape of a Q's chat completions: the model, the token
// shape (input_tokens, output_tokens, prefix, sessions; package shape)
// and streaming.
type LLMShape struct {
	Model       string `yaml:"model" json:"model"`
	shape.Shape `yaml:",inline"`
	// MaxTokens is shorthand for output_tokens: N (fixed).
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// PromptWords is the deprecated alias of input_tokens: N (fixed; the
	// count is now in tokens, not words). It goes away after one release.
	PromptWords int  `yaml:"prompt_words,omitempty" json:"prompt_words,omitempty"`
	Stream      bool `yaml:"stream" json:"stream"`
	// drawer is the compiled shape (Validate); nil until then.
	drawer *shape.Drawer
	// tokenizer is the one a prompt dataset is measured in (UseTokenizer);
	// nil: the default.
	tokenizer *tokenizer.Ref
}

// EmbedShape is the shape of a Q's embedding requests.
type EmbedShape struct {
	Model  string `yaml:"model" json:"model"`
	Inputs int    `yaml:"inputs" json:"inputs"` // texts per request
	Words  int    `yaml:"words" json:"words"`   // words per text
}

// SLOBoundOK reports whether bound is a deadline the protocol can carry:
// 0 (no bound) up to protocol.MaxDeadline.
func SLOBoundOK(bound time.Duration) bool { return bound >= 0 && bound <= protocol.MaxDeadline }

// Within reports whether ms meets bound (a bound ≤ 0 always holds).
func Within(ms float64, bound time.Duration) bool {
	return bound <= 0 || ms <= float64(bound)/float64(time.Millisecond)
}

// ValidatePolicies checks a Q's list of scheduling policies under key
// (e.g. "q2.policies"): not empty, each a policy the gateway knows, none
// twice (a repeated policy would merge two phases into one).
func ValidatePolicies(key string, ps []string) error {
	known := strings.Join(protocol.Policies(), ", ")
	if len(ps) == 0 {
		return fmt.Errorf("%s is empty; list at least one of %s", key, known)
	}
	for i, p := range ps {
		if !slices.Contains(protocol.Policies(), p) {
			return fmt.Errorf("%s: unknown policy %q; use %s", key, p, known)
		}
		if slices.Contains(ps[:i], p) {
			return fmt.Errorf("%s: %q is listed twice; list each policy once (use rounds to repeat them)", key, p)
		}
	}
	return nil
}
