package sim_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/stack/sim"
)

func Example() {
	p := profile.LLM{
		Name: "tiny", Model: "tiny-model", MaxNumSeqs: 8, KVCacheTokens: 4096, KVBlockTokens: 16,
		MaxWaiting: 16, PrefillPerToken: time.Microsecond, PrefillChunk: 512,
		StepBase: 100 * time.Microsecond, DefaultMaxTokens: 4,
	}
	e := sim.NewLLM("engine-0", p, sim.Options{Seed: 42})
	defer e.Close()
	ctx := context.Background()
	s, err := e.Generate(ctx, engine.ChatRequest{Prompt: "Tell me about batching", MaxTokens: 5})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	text := ""
	for {
		tok, err := s.Recv(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		text += tok.Text
	}
	u := s.Usage()
	fmt.Println(sim.CountTokens(text), "tokens;", u.PromptTokens, "prompt,", u.CompletionTokens, "completion")
	// Output: 5 tokens; 4 prompt, 5 completion
}
