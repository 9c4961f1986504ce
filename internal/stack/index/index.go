package index

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/viterin/vek/vek32"
)

// Hit is one search result: document id, cosine similarity to the query,
// and the document text.
type Hit struct {
	ID    int
	Score float32
	Text  string
}

// Index holds a synthetic corpus, its unit vectors and an HNSW graph over
// them. It is immutable after Build, so searches may run concurrently.
type Index struct {
	cfg   Config
	docs  []string
	vecs  [][]float32 // unit vectors, by document id
	graph *graph
}

// ErrDim is wrapped when a vector has the wrong dimension.
var ErrDim = errors.New("vector dimension mismatch")

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
	ix := &Index{cfg: cfg, docs: corpus(cfg)}
	ix.vecs = make([][]float32, len(ix.docs))
	for id, text := range ix.docs {
		v, err := unit(embed(text), cfg.Dim)
		if err != nil {
			return nil, fmt.Errorf("embedding document %d: %w", id, err)
		}
		ix.vecs[id] = v
	}
	ix.graph = newGraph(cfg.M, cfg.EfConstruction, cfg.Ml, cfg.Seed, ix.vecs)
	for id := range ix.vecs {
		ix.graph.insert(int32(id))
	}
	return ix, nil
}

// unit checks v's dimension and returns a normalised copy.
func unit(v []float32, dim int) ([]float32, error) {
	if len(v) != dim {
		return nil, fmt.Errorf("%w: got %d, index has %d", ErrDim, len(v), dim)
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("vector has no direction (norm %v)", math.Sqrt(sum))
	}
	inv := 1 / math.Sqrt(sum)
	out := make([]float32, dim)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, nil
}

// Config returns the configuration the index was built with (defaults filled).
func (ix *Index) Config() Config { return ix.cfg }

// Len returns the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Doc returns document id's text, or "" when id is out of range.
func (ix *Index) Doc(id int) string {
	if id < 0 || id >= len(ix.docs) {
		return ""
	}
	return ix.docs[id]
}

// Search returns the approximate k nearest documents to q by cosine
// similarity, best first: the HNSW search keeps max(k, ef_search)
// candidates, cut to the best k.
func (ix *Index) Search(q []float32, k int) ([]Hit, error) {
	u, err := ix.query(q, k)
	if err != nil || k <= 0 {
		return nil, err
	}
	nodes := ix.graph.search(u, max(k, ix.cfg.EfSearch))
	hits := make([]Hit, 0, len(nodes))
	for _, n := range nodes {
		hits = append(hits, ix.hit(int(n.id), u))
	}
	return topK(hits, k), nil
}

// Exact returns the true k nearest documents by brute force, best first.
func (ix *Index) Exact(q []float32, k int) ([]Hit, error) {
	u, err := ix.query(q, k)
	if err != nil || k <= 0 {
		return nil, err
	}
	k = min(k, len(ix.vecs))
	best := &maxHeap{} // the k best so far, the worst of them on top (dist = -score)
	for id := range ix.vecs {
		c := cand{id: int32(id), dist: -dot(ix.vecs[id], u)}
		switch {
		case best.Len() < k:
			heap.Push(best, c)
		case byDist(c, best.minHeap[0]) < 0:
			best.minHeap[0] = c
			heap.Fix(best, 0)
		}
	}
	hits := make([]Hit, 0, k)
	for _, c := range best.minHeap {
		hits = append(hits, ix.hit(int(c.id), u))
	}
	return topK(hits, k), nil
}

func (ix *Index) query(q []float32, k int) ([]float32, error) {
	if k < 0 {
		return nil, fmt.Errorf("search: k must be >= 0 (got %d)", k)
	}
	return unit(q, ix.cfg.Dim)
}

func (ix *Index) hit(id int, u []float32) Hit {
	return Hit{ID: id, Score: dot(ix.vecs[id], u), Text: ix.docs[id]}
}

// dot is the inner product, with AVX2 where the CPU has it.
func dot(a, b []float32) float32 { return vek32.Dot(a, b) }

// topK sorts hits by score, ties by id, and keeps the first k.
func topK(hits []Hit, k int) []Hit {
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))]
}

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

// Query is a question made from a document of the corpus.
type Query struct {
	Text  string
	DocID int // the document the words were taken from
}

// Queries makes n queries of words words each: every query picks a
// document (seeded) and samples words of it without replacement, so its
// answer exists in the corpus. The same seed gives the same queries.
func (ix *Index) Queries(n, words int, seed int64) []Query {
	if n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e7))
	out := make([]Query, n)
	for i := range out {
		id := rng.IntN(len(ix.docs))
		doc := strings.Fields(ix.docs[id])
		rng.Shuffle(len(doc), func(a, b int) { doc[a], doc[b] = doc[b], doc[a] })
		out[i] = Query{Text: strings.Join(doc[:min(max(words, 1), len(doc))], " "), DocID: id}
	}
	return out
}
