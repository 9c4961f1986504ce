package stack

import (
	"context"
	"fmt"

	"github.com/sagebench/sagebench/internal/corpus"

	"github.com/sagebench/sagebench/internal/stack/gateway"
	"github.com/sagebench/sagebench/internal/stack/index"
)

// retriever adapts index.Index to the gateway.
type retriever struct {
	ix    *index.Index
	model string
}

func (r *retriever) Dim() int      { return r.ix.Config().Dim }
func (r *retriever) Model() string { return r.model }

func (r *retriever) Search(q []float32, k int) ([]gateway.Hit, error) {
	hits, err := r.ix.Search(q, k)
	if err != nil {
		return nil, err
	}
	out := make([]gateway.Hit, len(hits))
	for i, h := range hits {
		out[i] = gateway.Hit{ID: h.ID, Score: h.Score, Text: h.Text}
	}
	return out, nil
}

// buildIndex embeds the synthetic corpus with sim.Vector at the index
// embedder's dimension, so vectors from /v1/embeddings search it.
func (s *Stack) buildIndex(ctx context.Context) (gateway.Retriever, error) {
	ec, ok := s.cfg.indexEmbedder()
	if !ok {
		return nil, nil
	}
	b := s.engines[ec.ID]
	dim := b.dim
	if dim == 0 { // a remote engine: ask it
		vecs, _, err := b.eng.Embedder.Embed(ctx, []string{"dimension probe"})
		if err != nil || len(vecs) != 1 {
			return nil, fmt.Errorf("index.embedder %s: probing its dimension: %v (or set index.size: 0)", ec.ID, err)
		}
		dim = len(vecs[0])
	}
	seed := s.cfg.Index.Seed
	if seed == 0 {
		seed = s.cfg.Seed
	}
	icfg := index.Config{Size: s.cfg.Index.Size, Dim: dim, Seed: seed, M: s.cfg.Index.M, EfSearch: s.cfg.Index.EfSearch}.WithDefaults()
	if err := icfg.Validate(); err != nil {
		return nil, &ConfigError{Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix, err := index.Build(icfg, func(text string) []float32 { return corpus.Vector(text, dim) })
	if err != nil {
		return nil, fmt.Errorf("building the index: %w", err)
	}
	return &retriever{ix: ix, model: b.eng.Embedder.Model()}, nil
}
