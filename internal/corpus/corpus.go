package corpus

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

// Corpus holds the documents of a Config and their unit vectors. It is
// immutable after New, so searches may run concurrently.
type Corpus struct {
	cfg  Config
	docs []string
	vecs [][]float32 // unit vectors, by document id
}

// ErrDim is wrapped when a vector has the wrong dimension.
var ErrDim = errors.New("vector dimension mismatch")

// New generates the documents of cfg (zero fields take defaults) and
// embeds each with embed; the vectors are normalised. Errors name fields
// under "corpus".
func New(cfg Config, embed func(string) []float32) (*Corpus, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate("corpus"); err != nil {
		return nil, err
	}
	if embed == nil {
		return nil, errors.New("corpus: embed function is nil")
	}
	c := &Corpus{cfg: cfg, docs: Documents(cfg)}
	c.vecs = make([][]float32, len(c.docs))
	for id, text := range c.docs {
		v, err := Unit(embed(text), cfg.Dim)
		if err != nil {
			return nil, fmt.Errorf("embedding document %d: %w", id, err)
		}
		c.vecs[id] = v
	}
	return c, nil
}

// Unit checks v's dimension and returns a normalised copy.
func Unit(v []float32, dim int) ([]float32, error) {
	if len(v) != dim {
		return nil, fmt.Errorf("%w: got %d, corpus has %d", ErrDim, len(v), dim)
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

// Config returns the configuration (defaults filled).
func (c *Corpus) Config() Config { return c.cfg }

// Len returns the number of documents.
func (c *Corpus) Len() int { return len(c.docs) }

// Doc returns document id's text, or "" when id is out of range.
func (c *Corpus) Doc(id int) string {
	if id < 0 || id >= len(c.docs) {
		return ""
	}
	return c.docs[id]
}

// Vec returns document id's unit vector (shared; do not modify).
func (c *Corpus) Vec(id int) []float32 { return c.vecs[id] }

// Vecs returns all unit vectors by id (shared; do not modify).
func (c *Corpus) Vecs() [][]float32 { return c.vecs }

// Query returns q normalised after checking k and q's dimension.
func (c *Corpus) Query(q []float32, k int) ([]float32, error) {
	if k < 0 {
		return nil, fmt.Errorf("search: k must be >= 0 (got %d)", k)
	}
	return Unit(q, c.cfg.Dim)
}

// Hit returns document id as a hit for the unit query u.
func (c *Corpus) Hit(id int, u []float32) Hit {
	return Hit{ID: id, Score: Dot(c.vecs[id], u), Text: c.docs[id]}
}

// Exact returns the true k nearest documents by brute force, best first.
func (c *Corpus) Exact(q []float32, k int) ([]Hit, error) {
	u, err := c.Query(q, k)
	if err != nil || k <= 0 {
		return nil, err
	}
	k = min(k, len(c.vecs))
	best := &worstFirst{} // the k best so far, the worst of them on top
	for id := range c.vecs {
		h := scored{id: id, score: Dot(c.vecs[id], u)}
		switch {
		case best.Len() < k:
			heap.Push(best, h)
		case better(h, best.s[0]):
			best.s[0] = h
			heap.Fix(best, 0)
		}
	}
	hits := make([]Hit, 0, k)
	for _, h := range best.s {
		hits = append(hits, c.Hit(h.id, u))
	}
	return TopK(hits, k), nil
}

// Dot is the inner product, with AVX2 where the CPU has it.
func Dot(a, b []float32) float32 { return vek32.Dot(a, b) }

// TopK sorts hits by score, ties by id, and keeps the first k.
func TopK(hits []Hit, k int) []Hit {
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))]
}

// Query is a question made from a document of the corpus.
type Query struct {
	Text  string
	DocID int // the document the words were taken from
}

// Queries makes n queries of words words each: every query picks a
// document (seeded) and samples words of it without replacement, so its
// answer exists in the corpus. The same seed gives the same queries.
func (c *Corpus) Queries(n, words int, seed int64) []Query {
	return c.QueriesOf(n, seed, func(_ int, doc []string) string {
		return strings.Join(doc[:min(max(words, 1), len(doc))], " ")
	})
}

// QueriesOf makes n queries whose text is question(i, doc): every query
// picks a document (seeded) and hands question its words in a seeded
// random order, so a question made of the first few has its answer in
// the corpus (Queries takes a count of words; Q1 fills a count of
// tokens). The same seed gives the same documents and orders.
func (c *Corpus) QueriesOf(n int, seed int64, question func(i int, doc []string) string) []Query {
	if n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e7))
	out := make([]Query, n)
	for i := range out {
		id := rng.IntN(len(c.docs))
		doc := strings.Fields(c.docs[id])
		rng.Shuffle(len(doc), func(a, b int) { doc[a], doc[b] = doc[b], doc[a] })
		out[i] = Query{Text: question(i, doc), DocID: id}
	}
	return out
}

// scored is a candidate of Exact.
type scored struct {
	id    int
	score float32
}

// better orders by score, ties by lower id: the order TopK gives.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id < b.id
}

// worstFirst is a heap whose top is the worst candidate kept.
type worstFirst struct{ s []scored }

func (h *worstFirst) Len() int           { return len(h.s) }
func (h *worstFirst) Less(i, j int) bool { return better(h.s[j], h.s[i]) }
func (h *worstFirst) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *worstFirst) Push(x any)         { h.s = append(h.s, x.(scored)) }
func (h *worstFirst) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
