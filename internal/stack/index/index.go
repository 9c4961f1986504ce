package index

import (
	"errors"
	"math"

	"github.com/sagebench/sagebench/internal/corpus"
)

// Hit is one search result: document id, cosine similarity to the query,
// and the document text.
type Hit = corpus.Hit

// Query is a question made from a document of the corpus.
type Query = corpus.Query

// Index is an HNSW graph over the unit vectors of a synthetic corpus. Doc,
// Len, Exact and Queries come from the corpus. It is immutable after
// Build, so searches may run concurrently.
type Index struct {
	*corpus.Corpus
	cfg   Config
	graph *graph
}

// ErrDim is wrapped when a vector has the wrong dimension.
var ErrDim = corpus.ErrDim

// Build generates the corpus of cfg (zero fields take defaults), embeds
// every document with embed and inserts the normalised vectors, in id
// order, into an HNSW graph whose level generator is seeded from cfg.Seed:
// the same config and embed function give the same index.
func Build(cfg Config, embed func(string) []float32) (*Index, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if embed == nil {
		return nil, errors.New("index.Build: embed function is nil")
	}
	c, err := corpus.New(cfg.corpus(), embed)
	if err != nil {
		return nil, err
	}
	ix := &Index{Corpus: c, cfg: cfg}
	ix.graph = newGraph(cfg.M, cfg.EfConstruction, cfg.Ml, cfg.Seed, c.Vecs())
	for id := range c.Vecs() {
		ix.graph.insert(int32(id))
	}
	return ix, nil
}

// Config returns the configuration the index was built with (defaults filled).
func (ix *Index) Config() Config { return ix.cfg }

// Search returns the approximate k nearest documents to q by cosine
// similarity, best first: the HNSW search keeps max(k, ef_search)
// candidates, cut to the best k.
func (ix *Index) Search(q []float32, k int) ([]Hit, error) {
	u, err := ix.Query(q, k)
	if err != nil || k <= 0 {
		return nil, err
	}
	nodes := ix.graph.search(u, max(k, ix.cfg.EfSearch))
	hits := make([]Hit, 0, len(nodes))
	for _, n := range nodes {
		hits = append(hits, ix.Hit(int(n.id), u))
	}
	return corpus.TopK(hits, k), nil
}

// dot is the inner product, with AVX2 where the CPU has it.
func dot(a, b []float32) float32 { return corpus.Dot(a, b) }

// Recall is the mean recall@k of Search against Exact over queries: the
// share of the true k nearest documents the approximate search returns.
// It is NaN when it cannot be measured: no queries, k <= 0, or a query of
// the wrong dimension.
func (ix *Index) Recall(queries [][]float32, k int) float64 {
	if len(queries) == 0 || k <= 0 {
		return math.NaN()
	}
	k = min(k, ix.Len())
	var total float64
	for _, q := range queries {
		approx, err := ix.Search(q, k)
		if err != nil {
			return math.NaN()
		}
		exact, _ := ix.Exact(q, k)
		found := make(map[int]bool, k)
		for _, h := range approx {
			found[h.ID] = true
		}
		n := 0
		for _, h := range exact {
			if found[h.ID] {
				n++
			}
		}
		total += float64(n) / float64(k)
	}
	return total / float64(len(queries))
}
