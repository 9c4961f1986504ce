package tokenizer_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Counting a prompt in the default tokenizer (cl100k_base, embedded).
func ExampleDefault() {
	tok := tokenizer.Default()
	fmt.Println(tok.Name(), tok.Count("Benchmarking LLM serving stacks in tokens."), tok.Encode("Hello, world!"))
	// Output: cl100k_base 9 [9906 11 1917 0]
}
