package corpus_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/corpus"
)

func ExampleVector() {
	a := corpus.Vector("vector search with HNSW", 64)
	b := corpus.Vector("HNSW vector search", 64)
	c := corpus.Vector("bake bread at home", 64)
	dot := func(x, y []float32) (s float32) {
		for i := range x {
			s += x[i] * y[i]
		}
		return s
	}
	fmt.Println(dot(a, b) > 0.7, dot(a, c) < 0.4)
	// Output: true true
}
