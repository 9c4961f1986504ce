package index_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/corpus"

	"github.com/sagebench/sagebench/internal/stack/index"
)

func Example() {
	cfg := index.Config{Size: 500, Dim: 64, Seed: 1}
	embed := func(text string) []float32 { return corpus.Vector(text, 64) }
	ix, err := index.Build(cfg, embed)
	if err != nil {
		panic(err)
	}
	q := ix.Queries(1, 8, 2)[0] // eight words of one document
	hits, err := ix.Search(embed(q.Text), 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(hits), "hits; source document found:", hits[0].ID == q.DocID || hits[1].ID == q.DocID || hits[2].ID == q.DocID)
	// Output: 3 hits; source document found: true
}
