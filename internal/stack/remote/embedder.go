package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// Embedder is a remote embedding engine.
type Embedder struct{ *base }

var _ engine.Embedder = (*Embedder)(nil)

// NewEmbedder returns a client for the engine at cfg.URL. It does not connect.
func NewEmbedder(cfg Config) (*Embedder, error) {
	b, err := newBase(cfg)
	if err != nil {
		return nil, err
	}
	return &Embedder{b}, nil
}

// maxEmbedResponse bounds what one embeddings response may hold.
const maxEmbedResponse = 256 << 20

// Embed posts inputs and returns one vector per input, in order.
func (e *Embedder) Embed(ctx context.Context, inputs []string) ([][]float32, engine.Usage, error) {
	e.running.Add(1)
	defer e.running.Add(-1)
	resp, err := e.post(ctx, "/v1/embeddings", map[string]any{"model": e.cfg.Model, "input": inputs}, false)
	if err != nil {
		return nil, engine.Usage{}, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxEmbedResponse)).Decode(&body); err != nil {
		return nil, engine.Usage{}, e.transportErr(fmt.Errorf("reading embeddings: %w", err))
	}
	out := make([][]float32, len(inputs))
	for _, d := range body.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, engine.Usage{}, fmt.Errorf("engine %s: embedding index %d out of range or repeated", e.cfg.ID, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if v == nil {
			return nil, engine.Usage{}, fmt.Errorf("engine %s: no embedding for input %d", e.cfg.ID, i)
		}
	}
	return out, engine.Usage{PromptTokens: body.Usage.PromptTokens}, nil
}
