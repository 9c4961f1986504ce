package profile_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/stack/profile"
)

func Example() {
	c, err := profile.Default()
	if err != nil {
		panic(err)
	}
	p, _ := c.LLM("llama3.1-8b-h100")
	fmt.Println("TTFT, 1000-token prompt, idle:", p.IdleTTFT(1000))
	fmt.Println("ITL, lone request:", p.IdleITL())
	fmt.Println("ITL, 128 running:", p.StepTime(128))
	e, _ := c.Embedder("bge-small-cpu")
	fmt.Println("embedding batch of 320 tokens:", e.BatchTime(320))
	// Output:
	// TTFT, 1000-token prompt, idle: 56.24ms
	// ITL, lone request: 6.24ms
	// ITL, 128 running: 11.32ms
	// embedding batch of 320 tokens: 21.2ms
}
