package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// Embedder is a remote embedding engine.
type Embedder struct {
	*base
	scratch sync.Pool // *embedScratch: a response's bytes and numbers
}

var _ engine.Embedder = (*Embedder)(nil)

// NewEmbedder returns a client for the engine at cfg.URL. It does not connect.
func NewEmbedder(cfg Config) (*Embedder, error) {
	b, err := newBase(cfg)
	if err != nil {
		return nil, err
	}
	return &Embedder{base: b}, nil
}

// maxEmbedResponse bounds what one embeddings response may hold.
const maxEmbedResponse = 256 << 20

// keepScratch bounds the buffers kept for the next response.
const keepScratch = 1 << 20

type embedScratch struct {
	body bytes.Buffer
	vals []float32
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// Embed posts inputs and returns one vector per input, in order.
func (e *Embedder) Embed(ctx context.Context, inputs []string) ([][]float32, engine.Usage, error) {
	body, err := e.call(ctx, inputs, false)
	if err != nil {
		return nil, engine.Usage{}, err
	}
	out, err := place(e.cfg.ID, body.data, len(inputs), func(d embedItem) []float32 { return d.vec })
	return out, engine.Usage{PromptTokens: body.tokens}, err
}

// EmbedJSON is Embed handing over each vector as the engine wrote it: a
// JSON list of numbers (checked to fit float32s), not parsed. A gateway
// answering in JSON writes it as it is instead of parsing and formatting
// every number again.
func (e *Embedder) EmbedJSON(ctx context.Context, inputs []string) ([][]byte, engine.Usage, error) {
	body, err := e.call(ctx, inputs, true)
	if err != nil {
		return nil, engine.Usage{}, err
	}
	out, err := place(e.cfg.ID, body.data, len(inputs), func(d embedItem) []byte { return d.raw })
	return out, engine.Usage{PromptTokens: body.tokens}, err
}

// call posts inputs and decodes the answer, its vectors as text or not.
func (e *Embedder) call(ctx context.Context, inputs []string, text bool) (embedBody, error) {
	e.running.Add(1)
	defer e.running.Add(-1)
	resp, err := e.post(ctx, "/v1/embeddings", embedRequest{Model: e.cfg.Model, Input: inputs}, false)
	if err != nil {
		return embedBody{}, err
	}
	defer resp.Body.Close()
	sc, _ := e.scratch.Get().(*embedScratch)
	if sc == nil {
		sc = &embedScratch{}
	}
	defer func() {
		if sc.body.Cap() <= keepScratch && cap(sc.vals)*4 <= keepScratch {
			e.scratch.Put(sc)
		}
	}()
	if err := e.read(resp, sc); err != nil {
		return embedBody{}, err
	}
	var body embedBody
	if text {
		body, err = decodeEmbeddingsRaw(sc.body.Bytes())
	} else {
		var vals []float32
		body, vals, err = decodeEmbeddings(sc.body.Bytes(), sc.vals)
		sc.vals = vals[:0]
	}
	if err != nil {
		return embedBody{}, e.transportErr(fmt.Errorf("reading embeddings: %w", err))
	}
	return body, nil
}

// read reads the response body into sc.body.
func (e *Embedder) read(resp *http.Response, sc *embedScratch) error {
	sc.body.Reset()
	if resp.ContentLength > 0 && resp.ContentLength <= maxEmbedResponse {
		sc.body.Grow(int(resp.ContentLength))
	}
	if _, err := sc.body.ReadFrom(io.LimitReader(resp.Body, maxEmbedResponse+1)); err != nil {
		return e.transportErr(fmt.Errorf("reading embeddings: %w", err))
	}
	if sc.body.Len() > maxEmbedResponse {
		return e.transportErr(fmt.Errorf("reading embeddings: larger than %d bytes", maxEmbedResponse))
	}
	return nil
}

// place orders the vectors by index, refusing holes and repeats.
func place[V any](id string, data []embedItem, n int, vec func(embedItem) []V) ([][]V, error) {
	out := make([][]V, n)
	for _, d := range data {
		if d.index < 0 || d.index >= len(out) || out[d.index] != nil {
			return nil, fmt.Errorf("engine %s: embedding index %d out of range or repeated", id, d.index)
		}
		out[d.index] = vec(d)
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("engine %s: no embedding for input %d", id, i)
		}
	}
	return out, nil
}
