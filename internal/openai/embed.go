package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/sagebench/sagebench/internal/record"
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
	x := &embedExchange{req: req}
	var res Result
	c.jsonCall(ctx, "/v1/embeddings", req.Header, x, &res)
	if res.Err != nil {
		return res
	}
	out := &x.out
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
		res.PromptTokens, _ = out.Usage.counts()
	}
	return res
}

// embedExchange is an embeddings request and its answer.
type embedExchange struct {
	req EmbedRequest
	out embedResponse
}

// appendBody is json.Marshal of {"model", "input"} without reflection
// (TestEmbedBody, FuzzEmbedBody: byte for byte).
func (x *embedExchange) appendBody(b []byte) ([]byte, error) {
	b = record.AppendJSONString(append(b, `{"model":`...), x.req.Model)
	b = append(b, `,"input":`...)
	if x.req.Input == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '[')
	for i, s := range x.req.Input {
		if i > 0 {
			b = append(b, ',')
		}
		b = record.AppendJSONString(b, s)
	}
	return append(b, "]}"...), nil
}

func (x *embedExchange) decode(data []byte) error  { return x.out.decode(data) }
func (x *embedExchange) errField() json.RawMessage { return x.out.Error }

// Retrieve queries the vector index; Result.Docs holds the hits, best first
// as the target ordered them.
func (c *Client) Retrieve(ctx context.Context, req RetrieveRequest) Result {
	if (req.Embedding == nil) == (req.Input == "") {
		res := Result{Start: time.Now()}
		c.fail(&res, ClassMalformed, errors.New("retrieve: give exactly one of Embedding and Input"))
		return res
	}
	x := &retrieveExchange{body: retrieveBody{req.Embedding, req.Input, req.TopK}}
	var res Result
	c.jsonCall(ctx, "/v1/retrieve", req.Header, x, &res)
	out := &x.out
	if res.Err == nil {
		if out.Data == nil {
			c.fail(&res, ClassMalformed, errors.New("retrieve: response has no data array"))
			return res
		}
		res.Docs = out.Data
	}
	return res
}

// jsonExchange is a JSON request and its 2xx answer: appendBody appends
// the request's body to dst, decode fills the answer from the body's
// bytes (which it may not keep: they are the call's), errField is the
// answer's "error" member.
type jsonExchange interface {
	appendBody(dst []byte) ([]byte, error)
	decode(data []byte) error
	errField() json.RawMessage
}

// retrieveExchange is a retrieve request and its answer.
type retrieveExchange struct {
	body retrieveBody
	out  struct {
		Data  []Doc           `json:"data"`
		Error json.RawMessage `json:"error"`
	}
}

type retrieveBody struct {
	Embedding []float32 `json:"embedding,omitempty"`
	Input     string    `json:"input,omitempty"`
	TopK      int       `json:"top_k,omitempty"`
}

func (x *retrieveExchange) appendBody(dst []byte) ([]byte, error) {
	b, err := json.Marshal(x.body)
	return append(dst, b...), err
}

// decode starts from an empty answer: under a retry policy one exchange
// decodes every attempt, and json.Unmarshal keeps what a member absent
// now held (an earlier attempt's "error" would fail a later success).
func (x *retrieveExchange) decode(data []byte) error {
	x.out.Data, x.out.Error = nil, nil
	return json.Unmarshal(data, &x.out)
}
func (x *retrieveExchange) errField() json.RawMessage { return x.out.Error }

// jsonCall POSTs x's body and decodes its 2xx answer into x; the outcome
// is *res (filled in place: a Result is ~430 bytes, and without a retry
// policy it is not copied from attempt to caller).
func (c *Client) jsonCall(ctx context.Context, path string, hdr http.Header, x jsonExchange, res *Result) {
	if c.retry == nil {
		c.jsonOnce(ctx, path, hdr, x, res)
		finishTries(res, nil, 1)
		return
	}
	// Not hedged: decode fills the caller's one value.
	*res = c.do(ctx, false, func(ctx context.Context, n int) (r Result) {
		c.jsonOnce(ctx, path, withAttempt(hdr, n), x, &r)
		return r
	})
}

// jsonOnce is one attempt of jsonCall, into *res (zero on entry).
func (c *Client) jsonOnce(ctx context.Context, path string, hdr http.Header, x jsonExchange, res *Result) {
	cl := c.calls.get()
	b, err := x.appendBody(cl.req[:0])
	if err != nil {
		c.fail(res, ClassMalformed, fmt.Errorf("encoding request: %w", err))
		return
	}
	cl.req = b
	cl = c.send(ctx, cl, http.MethodPost, path, b, hdr, false, res)
	if cl == nil {
		return
	}
	defer c.done(cl, res)
	data, err := cl.readAll()
	res.End = time.Now()
	if err != nil {
		c.readErr(cl, res, err)
		return
	}
	if err := x.decode(data); err != nil {
		c.fail(res, ClassMalformed, fmt.Errorf("decoding %s response: %w (body starts %q)", path, err, c.excerpt(data, 64)))
		return
	}
	if raw := x.errField(); errFromTarget(raw) {
		c.fail(res, ClassStreamError, fmt.Errorf("target reported an error: %s", c.excerpt([]byte(raw), 200)))
	}
}
