package corpus_test

import (
	"math"
	"slices"
	"testing"

	"github.com/sagebench/sagebench/internal/corpus"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestVector(t *testing.T) {
	const dim = 256
	v := corpus.Vector("The quick brown fox", dim)
	if len(v) != dim {
		t.Fatalf("len %d", len(v))
	}
	if n := cosine(v, v); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm² %v, want 1", n)
	}
	if !slices.Equal(v, corpus.Vector("the QUICK, brown fox!", dim)) {
		t.Error("case and punctuation changed the vector")
	}
	near := cosine(v, corpus.Vector("the quick brown dog", dim))
	far := cosine(v, corpus.Vector("lorem ipsum dolor sit", dim))
	if near < 0.6 || far > 0.3 || near <= far {
		t.Errorf("3 of 4 words shared: cos %.3f; none shared: cos %.3f", near, far)
	}
	empty := corpus.Vector("", dim)
	if n := cosine(empty, empty); math.Abs(n-1) > 1e-5 || !slices.Equal(empty, corpus.Vector("...", dim)) {
		t.Error("texts without words should share one unit vector")
	}
	if corpus.Vector("x", 0) != nil {
		t.Error("dim 0 should give nil")
	}
}
