package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// EmbedRequest embeds Input with Model (POST /v1/embeddings).
type EmbedRequest struct {
	Model  string
	Input  []string
	Header http.Header
}

// RetrieveRequest queries the target's vector index (POST /v1/retrieve, a
// sagebench extension) with either an embedding or a text Input.
type RetrieveRequest struct {
	Embedding []float32
	Input     string
	TopK      int
	Header    http.Header
}

// Doc is one retrieved document.
type Doc struct {
	ID    int     `json:"id"`
	Score float64 `json:"score"`
	Text  string  `json:"text"`
}

// Embed sends an embeddings request; Result.Embeddings[i] is the vector
// of Input[i].
func (c *Client) Embed(ctx context.Context, req EmbedRequest) Result {
	body := struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{req.Model, req.Input}
	var out embedResponse
	res := c.jsonCall(ctx, "/v1/embeddings", body, req.Header, &out)
	if res.Err != nil {
		return res
	}
	if len(out.Data) != len(req.Input) {
		c.fail(&res, ClassMalformed, fmt.Errorf("embeddings: got %d vectors for %d inputs", len(out.Data), len(req.Input)))
		return res
	}
	res.Embeddings = make([][]float32, len(out.Data))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(out.Data) || res.Embeddings[d.Index] != nil || len(d.Embedding) == 0 {
			c.fail(&res, ClassMalformed, fmt.Errorf("embeddings: bad or repeated index %d, or an empty vector", d.Index))
			res.Embeddings = nil
			return res
		}
		res.Embeddings[d.Index] = d.Embedding
	}
	if out.Usage != nil {
		res.PromptTokens = out.Usage.PromptTokens
	}
	return res
}

// Retrieve queries the vector index; Result.Docs holds the hits, best first
// as the target ordered them.
func (c *Client) Retrieve(ctx context.Context, req RetrieveRequest) Result {
	if (req.Embedding == nil) == (req.Input == "") {
		res := Result{Start: time.Now()}
		c.fail(&res, ClassMalformed, errors.New("retrieve: give exactly one of Embedding and Input"))
		return res
	}
	body := struct {
		Embedding []float32 `json:"embedding,omitempty"`
		Input     string    `json:"input,omitempty"`
		TopK      int       `json:"top_k,omitempty"`
	}{req.Embedding, req.Input, req.TopK}
	var out retrieveResponse
	res := c.jsonCall(ctx, "/v1/retrieve", body, req.Header, &out)
	if res.Err == nil {
		if out.Data == nil {
			c.fail(&res, ClassMalformed, errors.New("retrieve: response has no data array"))
			return res
		}
		res.Docs = out.Data
	}
	return res
}

// answer is a 2xx JSON body decoded: decode fills it from the body's
// bytes (which it may not keep: they are the call's), errField is its
// "error" member.
type answer interface {
	decode(data []byte) error
	errField() json.RawMessage
}

// retrieveResponse is the answer to POST /v1/retrieve.
type retrieveResponse struct {
	Data  []Doc           `json:"data"`
	Error json.RawMessage `json:"error"`
}

func (r *retrieveResponse) decode(data []byte) error  { return json.Unmarshal(data, r) }
func (r *retrieveResponse) errField() json.RawMessage { return r.Error }

// jsonCall POSTs body as JSON and decodes the 2xx answer into out.
func (c *Client) jsonCall(ctx context.Context, path string, body any, hdr http.Header, out answer) Result {
	// Not hedged: decode fills the caller's one value.
	return c.do(ctx, false, func(ctx context.Context, n int) Result {
		return c.jsonOnce(ctx, path, body, withAttempt(hdr, n), out)
	})
}

// jsonOnce is one attempt of jsonCall.
func (c *Client) jsonOnce(ctx context.Context, path string, body any, hdr http.Header, out answer) (res Result) { // named: done (deferred) completes it
	b, err := json.Marshal(body)
	if err != nil {
		c.fail(&res, ClassMalformed, fmt.Errorf("encoding request: %w", err))
		return res
	}
	cl := c.send(ctx, http.MethodPost, path, b, hdr, false, &res)
	if cl == nil {
		return res
	}
	defer c.done(cl, &res)
	data, err := cl.readAll()
	res.End = time.Now()
	if err != nil {
		c.readErr(cl, &res, err)
		return res
	}
	if err := out.decode(data); err != nil {
		c.fail(&res, ClassMalformed, fmt.Errorf("decoding %s response: %w (body starts %q)", path, err, c.excerpt(data, 64)))
		return res
	}
	if raw := out.errField(); errFromTarget(raw) {
		c.fail(&res, ClassStreamError, fmt.Errorf("target reported an error: %s", c.excerpt([]byte(raw), 200)))
	}
	return res
}
