package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// textEmbedder is an engine that can hand over each vector as the JSON
// list of numbers it received (remote engines): the gateway answering in
// JSON writes it as it is instead of parsing and formatting every number.
type textEmbedder interface {
	EmbedJSON(ctx context.Context, inputs []string) ([][]byte, engine.Usage, error)
}

// vectors are an engine's embeddings: parsed (floats) or, from a
// textEmbedder, as JSON text (text), parsed only when needed (base64
// answers, index search).
type vectors struct {
	f    [][]float32
	text [][]byte
}

// embedCall runs one engine call, as text when the engine offers it.
func embedCall(ctx context.Context, e engine.Embedder, inputs []string) (vectors, engine.Usage, error) {
	if te, ok := e.(textEmbedder); ok {
		t, u, err := te.EmbedJSON(ctx, inputs)
		return vectors{text: t}, u, err
	}
	f, u, err := e.Embed(ctx, inputs)
	return vectors{f: f}, u, err
}

func (v vectors) len() int { return len(v.f) + len(v.text) }

func (v vectors) slice(i, j int) vectors {
	if v.text != nil {
		return vectors{text: v.text[i:j]}
	}
	return vectors{f: v.f[i:j]}
}

// append adds w's vectors (one engine's calls: the same form).
func (v vectors) append(w vectors) vectors {
	return vectors{f: append(v.f, w.f...), text: append(v.text, w.text...)}
}

// size estimates the bytes of the vectors as JSON.
func (v vectors) size() int {
	n := 0
	for _, t := range v.text {
		n += len(t) + 64
	}
	for _, f := range v.f {
		n += 11*len(f) + 64
	}
	return n
}

// floats returns vector i parsed.
func (v vectors) floats(i int) ([]float32, error) {
	if v.text == nil {
		return v.f[i], nil
	}
	var f []float32
	if err := json.Unmarshal(v.text[i], &f); err != nil {
		return nil, fmt.Errorf("embedding %d: %w", i, err)
	}
	return f, nil
}
