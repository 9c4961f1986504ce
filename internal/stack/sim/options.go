package sim

import (
	"errors"
	"math"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Options configures a simulated engine.
type Options struct {
	// Seed seeds the step-time jitter and the generated text. Engines with
	// the same profile, seed and inputs behave identically.
	Seed int64
	// Clock is the time source; nil means the wall clock.
	Clock Clock
	// Tokenizer counts an LLM's prompts, each message's content in turn
	// (no chat template), and its prefix cache hashes their token IDs;
	// an embedder's inputs, each in turn (no special tokens); nil:
	// CountTokens of the rendered prompt or input.
	Tokenizer tokenizer.Tokenizer
	// ChatTemplate, with Tokenizer, renders the messages as the model's
	// server does before they are counted: prompt_tokens then includes
	// the template's tokens (nil: the contents alone).
	ChatTemplate *chattemplate.Template
}

func (o Options) clock() Clock {
	if o.Clock == nil {
		return RealClock{}
	}
	return o.Clock
}

// errStreamClosed is returned by Recv after the consumer closed the stream.
var errStreamClosed = errors.New("stream closed by consumer")

// jitterFactor maps a uniform u in [0,1) to a factor in [1-j, 1+j).
func jitterFactor(j, u float64) float64 { return 1 + j*(2*u-1) }

// slowdownFactor sanitises a SetSlowdown argument: non-positive, NaN or
// infinite factors mean "no slowdown".
func slowdownFactor(f float64) float64 {
	if !(f > 0) || math.IsInf(f, 0) {
		return 1
	}
	return f
}
