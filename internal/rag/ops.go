package rag

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/openai"
)

// Operator names under which Register puts the Q1 operators.
const (
	OpEmbed    = "embed"
	OpRetrieve = "retrieve"
	OpGenerate = "generate"
)

// Ops lists the operator names in transaction order.
var Ops = []string{OpEmbed, OpRetrieve, OpGenerate}

// RequestType is the X-Request-Type every Q1 request carries.
const RequestType = protocol.TypeRAG

// Client is what the operators need of a target: *openai.Client.
type Client interface {
	Embed(ctx context.Context, req openai.EmbedRequest) openai.Result
	Retrieve(ctx context.Context, req openai.RetrieveRequest) openai.Result
	Chat(ctx context.Context, req openai.ChatRequest) openai.Result
}

var _ Client = (*openai.Client)(nil)

// Defaults configure the operators; a stage's params override them
// (embed: model; generate: model, max_tokens); the transaction's
// TopK, when set, wins over Defaults.TopK.
type Defaults struct {
	EmbedModel string
	TopK       int
	LLMModel   string
	MaxTokens  int
}

// Register adds the embed, retrieve and generate operators, talking to c,
// to reg. c may be nil when the registry only validates graphs (building
// operators checks their params; Process then fails).
func Register(reg *dataflow.Registry, c Client, d Defaults) error {
	for name, f := range map[string]dataflow.Factory{
		OpEmbed:    func(s dataflow.StageConfig) (dataflow.Operator, error) { return newEmbed(c, d, s) },
		OpRetrieve: func(s dataflow.StageConfig) (dataflow.Operator, error) { return newRetrieve(c, d, s) },
		OpGenerate: func(s dataflow.StageConfig) (dataflow.Operator, error) { return newGenerate(c, d, s) },
	} {
		if err := reg.Register(name, f); err != nil {
			return err
		}
	}
	return nil
}

// params reads a stage's params, allowing only the keys given.
type params struct {
	stage dataflow.StageConfig
	err   error
}

func newParams(s dataflow.StageConfig, allowed ...string) *params {
	p := &params{stage: s}
	for k := range s.Params {
		if !slices.Contains(allowed, k) {
			p.err = fmt.Errorf("stage %q: unknown param %q (operator %s takes: %s)", s.Name, k, s.Operator, strings.Join(allowed, ", "))
		}
	}
	return p
}

func (p *params) str(key, def string) string {
	if v, ok := p.stage.Params[key]; ok {
		return v
	}
	return def
}

func (p *params) positive(key string, def int) int {
	v, ok := p.stage.Params[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		p.err = fmt.Errorf("stage %q: param %s %q: must be an integer ≥ 1", p.stage.Name, key, v)
	}
	return n
}

// op is what the three operators share: the stage's name, the client and
// the transaction codec around one call.
type op struct {
	stage  string
	client Client
	call   func(ctx context.Context, in dataflow.Record, t *Txn) (openai.Result, error)
}

// Process decodes the transaction, makes the stage's call, records it and
// emits the transaction under the same ID.
func (o *op) Process(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
	if o.client == nil {
		return fmt.Errorf("stage %q: no client (a validation-only registry)", o.stage)
	}
	t, err := DecodeTxn(in.Payload)
	if err != nil {
		return payloadError(o.stage, err)
	}
	res, err := o.call(ctx, in, t)
	if err != nil {
		return err
	}
	if res.Err != nil {
		return &CallError{Stage: o.stage, Class: res.ErrClass, Status: res.Status, Err: res.Err}
	}
	t.setCall(Call{Stage: o.stage, Start: res.Start, Sent: res.Sent, FirstByte: res.FirstByte,
		FirstToken: res.FirstToken, End: res.End, Tokens: res.Tokens, Status: res.Status,
		Engine: res.Engine, Retries: res.Retries, PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens})
	out := in
	out.Payload = AppendTxn(make([]byte, 0, len(in.Payload)+256), t)
	return emit(out)
}

// header carries the transaction's tenant, type and remaining deadline.
func header(m dataflow.Metadata) http.Header {
	h := http.Header{}
	h.Set(protocol.HeaderType, RequestType)
	if m.Tenant != "" {
		h.Set(protocol.HeaderTenant, m.Tenant)
	}
	if !m.Deadline.IsZero() {
		h.Set(protocol.HeaderDeadline, strconv.FormatInt(max(time.Until(m.Deadline).Milliseconds(), 1), 10))
	}
	return h
}

func newEmbed(c Client, d Defaults, s dataflow.StageConfig) (dataflow.Operator, error) {
	p := newParams(s, "model")
	model := p.str("model", d.EmbedModel)
	if p.err == nil && model == "" {
		p.err = fmt.Errorf("stage %q: no embedding model (set param model)", s.Name)
	}
	o := &op{stage: s.Name, client: c}
	o.call = func(ctx context.Context, in dataflow.Record, t *Txn) (openai.Result, error) {
		res := c.Embed(ctx, openai.EmbedRequest{Model: model, Input: []string{t.Query}, Header: header(in.Meta)})
		if res.Err == nil {
			if len(res.Embeddings) != 1 || len(res.Embeddings[0]) == 0 {
				return res, &CallError{Stage: s.Name, Class: openai.ClassMalformed, Status: res.Status,
					Err: fmt.Errorf("%d embeddings for 1 input", len(res.Embeddings))}
			}
			t.Vector = res.Embeddings[0]
		}
		return res, nil
	}
	return o, p.err
}

func newRetrieve(c Client, d Defaults, s dataflow.StageConfig) (dataflow.Operator, error) {
	p := newParams(s)
	k := max(d.TopK, 1)
	o := &op{stage: s.Name, client: c}
	o.call = func(ctx context.Context, in dataflow.Record, t *Txn) (openai.Result, error) {
		if len(t.Vector) == 0 {
			return openai.Result{}, payloadError(s.Name, fmt.Errorf("no query embedding to retrieve with (is an embed stage before %q?)", s.Name))
		}
		topK := k
		if t.TopK > 0 {
			topK = t.TopK
		}
		res := c.Retrieve(ctx, openai.RetrieveRequest{Embedding: t.Vector, TopK: topK, Header: header(in.Meta)})
		if res.Err == nil {
			t.Hits = make([]Hit, len(res.Docs))
			for i, doc := range res.Docs {
				t.Hits[i] = Hit{ID: doc.ID, Score: float32(doc.Score), Text: doc.Text}
			}
		}
		return res, nil
	}
	return o, p.err
}

func newGenerate(c Client, d Defaults, s dataflow.StageConfig) (dataflow.Operator, error) {
	p := newParams(s, "model", "max_tokens", "ignore_eos", "min_tokens")
	model := p.str("model", d.LLMModel)
	maxTok := p.positive("max_tokens", max(d.MaxTokens, 1))
	ignoreEOS := p.str("ignore_eos", "false") == "true" // pins the output length on a real server
	minTok := 0
	if _, ok := s.Params["min_tokens"]; ok {
		minTok = p.positive("min_tokens", 1)
	}
	if p.err == nil && model == "" {
		p.err = fmt.Errorf("stage %q: no LLM model (set param model)", s.Name)
	}
	o := &op{stage: s.Name, client: c}
	o.call = func(ctx context.Context, in dataflow.Record, t *Txn) (openai.Result, error) {
		res := c.Chat(ctx, openai.ChatRequest{Model: model, MaxTokens: maxTok, Stream: true, IncludeUsage: true,
			Messages: Prompt(t), Header: header(in.Meta), IgnoreEOS: ignoreEOS, MinTokens: minTok})
		return res, nil
	}
	return o, p.err
}

// Prompt is the chat of a transaction: an instruction, the retrieved
// passages numbered best first, and the question.
func Prompt(t *Txn) []openai.Message {
	var b strings.Builder
	b.WriteString("Context:\n")
	for i, h := range t.Hits {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, h.Text)
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(t.Query)
	return []openai.Message{
		{Role: "system", Content: "Answer the question using only the numbered context passages; cite them as [n]."},
		{Role: "user", Content: b.String()},
	}
}
