package shape_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// A request's lengths drawn from its seed, and a prompt of exactly that
// many tokens.
func ExampleSynth_Prompt() {
	sh := shape.Shape{InputTokens: shape.Dist{Kind: shape.Uniform, Min: 100, Max: 200}, OutputTokens: shape.FixedDist(64)}
	d, err := sh.Compile("llm", 0, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	l := d.Draw(42)
	prompt := shape.DefaultSynth().Prompt(42, l.Input)
	fmt.Println(tokenizer.Default().Count(prompt) == l.Input, l.Output)
	// Output: true 64
}
