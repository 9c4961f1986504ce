package index

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sagebench/sagebench/internal/corpus"
)

func embedder(dim int) func(string) []float32 {
	return func(s string) []float32 { return corpus.Vector(s, dim) }
}

// shared builds are reused across tests; building is the slow part.
var (
	buildOnce sync.Once
	defIndex  *Index
	defErr    error
)

// defaultIndex is an index at the default parameters (M, ef, dim, words
// per document) over recallDocs documents: recall depends on those
// parameters far more than on size, and 2,000 documents build in about a
// second where the default 10,000 take a minute under -race.
// BenchmarkRecallAtDefaults measures the full default size.
func defaultIndex(t testing.TB) *Index {
	t.Helper()
	buildOnce.Do(func() {
		cfg := Config{Seed: 42, Size: recallDocs}.WithDefaults()
		defIndex, defErr = Build(cfg, embedder(cfg.Dim))
	})
	if defErr != nil {
		t.Fatal(defErr)
	}
	return defIndex
}

// recallDocs is the corpus size of the recall test.
const recallDocs = 2000

func TestRecallAtDefaults(t *testing.T) {
	ix := defaultIndex(t)
	cfg := ix.Config()
	qs := recallQueries(ix)
	for _, k := range []int{1, 5, 10} {
		r := ix.Recall(qs, k)
		t.Logf("recall@%d = %.3f (size %d, dim %d, M %d, ef %d)", k, r, ix.Len(), cfg.Dim, cfg.M, cfg.EfSearch)
		if r < 0.9 {
			t.Errorf("recall@%d = %.3f, want >= 0.9", k, r)
		}
	}
}

func recallQueries(ix *Index) [][]float32 {
	var qs [][]float32
	for _, q := range ix.Queries(200, 4, 7) {
		qs = append(qs, corpus.Vector(q.Text, ix.Config().Dim))
	}
	return qs
}

// BenchmarkRecallAtDefaults builds the default 10,000-document index once
// and reports recall@10 (the docs quote it) and the search time.
func BenchmarkRecallAtDefaults(b *testing.B) {
	cfg := Config{Seed: 42}.WithDefaults()
	ix, err := Build(cfg, embedder(cfg.Dim))
	if err != nil {
		b.Fatal(err)
	}
	qs := recallQueries(ix)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ix.Search(qs[i%len(qs)], 10); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(ix.Recall(qs, 10), "recall@10")
}

func TestQueriesFindTheirDocument(t *testing.T) {
	ix := small(t)
	queries := ix.Queries(100, 6, 1)
	found := 0
	for _, q := range queries {
		if !strings.Contains(" "+ix.Doc(q.DocID)+" ", " "+strings.Fields(q.Text)[0]+" ") {
			t.Fatalf("query %q has a word not in document %d", q.Text, q.DocID)
		}
		hits, err := ix.Exact(corpus.Vector(q.Text, ix.Config().Dim), 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ID == q.DocID {
				found++
				break
			}
		}
	}
	// Documents of one topic share most of their words, so a 6-word query
	// can match a sibling as well as its source: most, not all, rank first.
	t.Logf("source document in the exact top 5 for %d of 100 queries", found)
	if found < 80 {
		t.Errorf("source document in the exact top 5 for %d of 100 queries, want >= 80", found)
	}
	if !slices.Equal(queries, ix.Queries(100, 6, 1)) {
		t.Error("same seed gave different queries")
	}
}

func small(t testing.TB) *Index {
	t.Helper()
	ix, err := Build(Config{Size: 1500, Dim: 64, Seed: 3}, embedder(64))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestSearchAgreesWithExactOnSmallCorpus(t *testing.T) {
	ix := small(t)
	q := corpus.Vector(ix.Doc(17), 64)
	hits, err := ix.Search(q, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].ID != 17 || hits[0].Score < 0.999 || hits[0].Text != ix.Doc(17) {
		t.Fatalf("searching a document's own vector: %+v", hits[:1])
	}
	if !slices.IsSortedFunc(hits, func(a, b Hit) int { return -cmpF(a.Score, b.Score) }) {
		t.Error("hits not sorted best first")
	}
	if h, _ := ix.Search(q, 0); len(h) != 0 {
		t.Error("k = 0 should return nothing")
	}
	if h, _ := ix.Exact(q, 5000); len(h) != ix.Len() {
		t.Errorf("k beyond the corpus returned %d hits", len(h))
	}
}

func cmpF(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		embed func(string) []float32
		want  string
	}{
		{"negative size", Config{Size: -1}, embedder(384), "index.size"},
		{"dim too big", Config{Size: 10, Dim: MaxDim + 1}, embedder(8), "index.dim"},
		{"bad ml", Config{Size: 10, Dim: 8, Ml: 1.5}, embedder(8), "index.ml"},
		{"m too small", Config{Size: 10, Dim: 8, M: 1}, embedder(8), "index.m"},
		{"embed gives wrong dim", Config{Size: 10, Dim: 8}, embedder(9), "dimension mismatch"},
		{"embed gives zero vector", Config{Size: 10, Dim: 8}, func(string) []float32 { return make([]float32, 8) }, "no direction"},
		{"nil embed", Config{Size: 10, Dim: 8}, nil, "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.cfg, tt.embed)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build error %v, want it to mention %q", err, tt.want)
			}
		})
	}
	ix := small(t)
	if _, err := ix.Search(make([]float32, 3), 1); !errors.Is(err, ErrDim) {
		t.Errorf("Search with a wrong-size query: %v, want ErrDim", err)
	}
	if r := ix.Recall(nil, 5); !math.IsNaN(r) {
		t.Errorf("Recall without queries = %v, want NaN", r)
	}
	if r := ix.Recall([][]float32{make([]float32, 3)}, 5); !math.IsNaN(r) {
		t.Errorf("Recall with a wrong-size query = %v, want NaN", r)
	}
	if ix.Doc(-1) != "" || ix.Doc(ix.Len()) != "" {
		t.Error("Doc out of range should be empty")
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix := small(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if _, err := ix.Search(corpus.Vector(ix.Doc(i*50+j), 64), 5); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
