package gateway

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// batch is several embedding requests the gateway runs as one Embed call
// (hybrid policy). The dispatcher starts it; each request reads its slice.
type batch struct {
	done  chan struct{}
	vecs  vectors
	usage engine.Usage
	err   error
}

func (p *pool) assignBatch(ts []*ticket, m *entry) {
	m.running++
	b := &batch{done: make(chan struct{})}
	var inputs []string
	for _, t := range ts {
		t.assigned = true
		p.queued--
		t.ready <- assignment{m: m, batch: b, off: len(inputs)}
		inputs = append(inputs, t.inputs...)
	}
	go p.runBatch(m, b, inputs)
}

func (p *pool) runBatch(m *entry, b *batch, inputs []string) {
	start := p.g.now()
	b.vecs, b.usage, b.err = p.g.embedBounded(context.Background(), m, inputs)
	close(b.done)
	if b.err == nil {
		p.g.met.tokens.WithLabelValues(m.id, m.model, "prompt").Add(float64(b.usage.PromptTokens))
	}
	p.release(m, b.err, p.g.now().Sub(start))
}

type gatewayError string

func (e gatewayError) Error() string { return string(e) }

const errShortBatch = gatewayError("engine returned a different number of vectors than inputs")

// embedResult is the outcome of an embedding request.
type embedResult struct {
	vecs    vectors
	usage   engine.Usage
	m       *entry
	retries int
	waited  time.Duration // queue wait (protocol.HeaderQueueWait)
}

func (g *Gateway) embeddings(w http.ResponseWriter, r *http.Request, c *call) {
	var req embeddingRequest
	md, ok := c.open(w, r, "embedding", &req)
	if !ok {
		return
	}
	inputs, aerr := embeddingInputs(req.Input, g.cfg.MaxInputs)
	if aerr == nil && req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		aerr = badRequest("invalid_value", "field encoding_format: %q (want float or base64)", req.EncodingFormat)
	}
	if aerr != nil {
		c.fail(w, aerr)
		return
	}
	res, aerr := g.embed(r.Context(), md, req.Model, inputs, c)
	if aerr != nil {
		c.fail(w, aerr)
		return
	}
	w.Header().Set(protocol.HeaderEngine, res.m.id)
	w.Header().Set(protocol.HeaderQueueWait, protocol.QueueWaitValue(res.waited))
	if res.retries > 0 {
		w.Header().Set(protocol.HeaderRetries, "1")
	}
	body, err := appendEmbeddings(make([]byte, 0, 256+res.vecs.size()), res, c.model, req.EncodingFormat == "base64")
	if err != nil {
		c.fail(w, engineFailed(res.m.id, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body))) // one write, not chunks
	c.answered(w.Header(), 0)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// appendEmbeddings writes the embeddings response without reflection: the
// vectors dominate its size and encoding/json's cost. Vectors an engine
// handed over as JSON text are written as they are.
func appendEmbeddings(b []byte, res *embedResult, model string, b64 bool) ([]byte, error) {
	b = append(b, `{"object":"list","data":[`...)
	for i := range res.vecs.len() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		switch {
		case res.vecs.text != nil && !b64:
			b = append(b, res.vecs.text[i]...)
		default:
			v, err := res.vecs.floats(i)
			if err != nil {
				return nil, err
			}
			if b64 {
				b = appendJSONString(b, encodeBase64(v))
			} else {
				b = appendFloats(b, v)
			}
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(res.usage.PromptTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(res.usage.PromptTokens), 10)
	return append(b, "}}\n"...), nil
}

// appendFloats writes v as a JSON array; non-finite values (which JSON
// cannot carry) become 0.
func appendFloats(b []byte, v []float32) []byte {
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			f = 0
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return append(b, ']')
}

func encodeBase64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// embed admits, queues and runs one embedding request, retrying once on
// another engine if the first fails.
func (g *Gateway) embed(ctx context.Context, md meta, model string, inputs []string, c *call) (*embedResult, *apiError) {
	model, aerr := g.resolveModel(model, engine.KindEmbedding)
	if aerr != nil {
		return nil, aerr
	}
	c.model = model
	release, aerr := g.admit(md.Tenant, c.start)
	if aerr != nil {
		return nil, aerr
	}
	defer release()
	p := g.pools[engine.KindEmbedding]
	t := newTicket(md, engine.KindEmbedding, model, c.start)
	t.inputs = inputs
	if aerr := p.enqueue(t); aerr != nil {
		return nil, aerr
	}
	for attempt := 0; ; attempt++ {
		a := p.wait(ctx, t)
		if a.err != nil {
			return nil, a.err.afterRetry(attempt)
		}
		res, err := g.runEmbed(ctx, p, a, inputs)
		if err == nil {
			res.retries, res.waited = attempt, t.waited
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, &apiError{Status: 499, Type: "cancelled", Code: "client_closed", Message: "client closed the request"}
		}
		if attempt > 0 {
			return nil, engineFailed(a.m.id, err).afterRetry(attempt)
		}
		g.met.retries.WithLabelValues("embedding").Inc()
		p.requeue(t, a.m)
	}
}

// runEmbed runs inputs on the assigned engine, alone or as its slice of a
// gateway-side batch, and returns the engine's error if it failed.
func (g *Gateway) runEmbed(ctx context.Context, p *pool, a assignment, inputs []string) (*embedResult, error) {
	if a.batch != nil {
		return batchResult(ctx, a, len(inputs))
	}
	start := g.now()
	vecs, u, err := g.embedBounded(ctx, a.m, inputs)
	p.release(a.m, err, g.now().Sub(start))
	if err != nil {
		return nil, err
	}
	g.met.tokens.WithLabelValues(a.m.id, a.m.model, "prompt").Add(float64(u.PromptTokens))
	return &embedResult{vecs: vecs, usage: u, m: a.m}, nil
}

// embedCallBytes bounds the input text of one engine call (besides
// MaxBatch inputs): a call then runs well within the stall timeout on any
// engine we model.
const embedCallBytes = 64 << 10

// embedBounded calls the engine, turning a silence longer than the stall
// timeout into errStalled. A list over MaxBatch inputs or embedCallBytes
// is sent in several calls, each answer counting as progress: a legal but
// large list (2,040 inputs, 1 MB) takes longer than the stall timeout in
// all, and must neither look like a stall nor get the engine ejected.
func (g *Gateway) embedBounded(ctx context.Context, m *entry, inputs []string) (vectors, engine.Usage, error) {
	wd := newWatchdog(ctx, g.cfg.StallTimeout, m)
	defer wd.stop()
	var vecs vectors
	var usage engine.Usage
	for rest := inputs; len(rest) > 0; {
		part := rest[:embedCallSize(rest, g.cfg.MaxBatch)]
		rest = rest[len(part):]
		v, u, err := embedCall(wd.ctx, m.eng.Embedder, part)
		if err == nil && v.len() != len(part) {
			err = errShortBatch
		}
		if err != nil {
			return vectors{}, engine.Usage{}, wd.explain(err)
		}
		wd.kick()
		vecs = vecs.append(v)
		usage.PromptTokens += u.PromptTokens
	}
	return vecs, usage, nil
}

// embedCallSize is how many of inputs (at least one) go in the next call.
func embedCallSize(inputs []string, maxInputs int) int {
	n, size := 0, 0
	for n < len(inputs) && n < maxInputs && (n == 0 || size+len(inputs[n]) <= embedCallBytes) {
		size += len(inputs[n])
		n++
	}
	return n
}

func batchResult(ctx context.Context, a assignment, n int) (*embedResult, error) {
	select {
	case <-a.batch.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if a.batch.err != nil {
		return nil, a.batch.err
	}
	total := a.batch.vecs.len()
	u := engine.Usage{PromptTokens: a.batch.usage.PromptTokens * n / max(total, 1)} // the batch's tokens, shared by input count
	return &embedResult{vecs: a.batch.vecs.slice(a.off, a.off+n), usage: u, m: a.m}, nil
}

// Retriever is the vector index behind /v1/retrieve.
type Retriever interface {
	Dim() int
	Model() string // the embedding model whose vectors the index holds
	Search(q []float32, k int) ([]Hit, error)
}

// Hit is one search result.
type Hit struct {
	ID    int     `json:"id"`
	Score float32 `json:"score"`
	Text  string  `json:"text"`
}

const maxTopK = 1000

func (g *Gateway) retrieve(w http.ResponseWriter, r *http.Request, c *call) {
	var req retrieveRequest
	md, ok := c.open(w, r, "retrieve", &req)
	if !ok {
		return
	}
	if g.cfg.Retriever == nil {
		c.fail(w, notFound("no_index", "this stack has no index (set index in the stack config)"))
		return
	}
	k, q, aerr := g.retrieveQuery(r.Context(), md, &req, c)
	if aerr != nil {
		c.fail(w, aerr)
		return
	}
	c.model = g.cfg.Retriever.Model()
	start := time.Now()
	hits, err := g.cfg.Retriever.Search(q, k)
	if err != nil {
		c.fail(w, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "search_failed", Message: "index search: " + err.Error()})
		return
	}
	w.Header().Set(protocol.HeaderSearchDuration, formatMicros(time.Since(start)))
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": hits, "model": c.model})
}

func (g *Gateway) retrieveQuery(ctx context.Context, md meta, req *retrieveRequest, c *call) (int, []float32, *apiError) {
	k := 5
	if req.TopK != nil {
		k = *req.TopK
	}
	if k < 1 || k > maxTopK {
		return 0, nil, badRequest("invalid_value", "field top_k: %d must be in [1, %d]", k, maxTopK)
	}
	switch {
	case req.Input != nil && len(req.Embedding) > 0:
		return 0, nil, badRequest("invalid_value", "fields embedding and input: send one, not both")
	case req.Input != nil:
		if *req.Input == "" {
			return 0, nil, badRequest("invalid_value", "field input: must not be empty")
		}
		model := req.Model
		if model == "" {
			model = g.cfg.Retriever.Model()
		}
		res, aerr := g.embed(ctx, md, model, []string{*req.Input}, c)
		if aerr != nil {
			return 0, nil, aerr
		}
		v, err := res.vecs.floats(0)
		if err != nil {
			return 0, nil, engineFailed(res.m.id, err)
		}
		req.Embedding = v
	case len(req.Embedding) == 0:
		return 0, nil, badRequest("invalid_value", "field embedding or input: one is required")
	}
	if d := g.cfg.Retriever.Dim(); len(req.Embedding) != d {
		return 0, nil, badRequest("invalid_value", "field embedding: %d dimensions, the index has %d", len(req.Embedding), d)
	}
	return k, req.Embedding, nil
}

func formatMicros(d time.Duration) string {
	return strconv.FormatInt(d.Microseconds(), 10)
}
