package corpus_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/corpus"
)

func TestCorpusIsDeterministic(t *testing.T) {
	a := corpus.Documents(corpus.Config{Size: 50, Seed: 9})
	b := corpus.Documents(corpus.Config{Size: 50, Seed: 9})
	c := corpus.Documents(corpus.Config{Size: 50, Seed: 10})
	if !slices.Equal(a, b) {
		t.Error("same seed, different corpus")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same corpus")
	}
	if n := len(strings.Fields(a[0])); n != 32 {
		t.Errorf("document has %d words, want doc_words 32", n)
	}
}

func TestExactMatchesFullSort(t *testing.T) {
	c, err := corpus.New(corpus.Config{Size: 300, Dim: 64, Seed: 3}, func(s string) []float32 { return corpus.Vector(s, 64) })
	if err != nil {
		t.Fatal(err)
	}
	ix := c
	for _, q := range ix.Queries(20, 3, 5) {
		u := corpus.Vector(q.Text, 64)
		all := make([]corpus.Hit, ix.Len())
		for id := range all {
			all[id] = ix.Hit(id, u)
		}
		want := corpus.TopK(all, 7)
		got, err := ix.Exact(u, 7)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Exact(%q) = %v, want %v", q.Text, got, want)
		}
	}
}
