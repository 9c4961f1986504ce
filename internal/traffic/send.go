package traffic

import (
	"context"
	"net/http"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// Item is the drawn shape of one request.
type Item struct {
	Type, Tenant, Priority string
	Text                   uint64 // seed of the request's text
}

// Shapes are the request shapes Send uses for each type.
type Shapes struct {
	LLM       LLMShape
	Embedding EmbedShape
}

// Send performs one request of it's type with the protocol headers
// (tenant, priority, type and, when deadline > 0, the SLO deadline) and
// returns rec completed with the call's timing, status and usage. rec
// carries the caller's identity fields (ID, Seq, Kind, Phase).
func (s Shapes) Send(ctx context.Context, env *workload.Env, rec record.Request, it Item, intended time.Time, deadline time.Duration) record.Request {
	hdr := http.Header{}
	hdr.Set(protocol.HeaderTenant, it.Tenant)
	hdr.Set(protocol.HeaderPriority, it.Priority)
	hdr.Set(protocol.HeaderType, it.Type)
	protocol.SetDeadline(hdr, deadline)
	rec.Type, rec.Tenant, rec.Priority = it.Type, it.Tenant, it.Priority
	var res openai.Result
	if it.Type == protocol.TypeLLM {
		rec.Model = s.LLM.Model
		res = env.Target.Client().Chat(ctx, openai.ChatRequest{Model: s.LLM.Model, MaxTokens: s.LLM.MaxTokens,
			Messages: []openai.Message{{Role: "user", Content: Words(it.Text, s.LLM.PromptWords)}},
			Stream:   s.LLM.Stream, IncludeUsage: s.LLM.Stream, Header: hdr})
	} else {
		rec.Model = s.Embedding.Model
		in := make([]string, s.Embedding.Inputs)
		for k := range in {
			in[k] = Words(it.Text+uint64(k), s.Embedding.Words)
		}
		res = env.Target.Client().Embed(ctx, openai.EmbedRequest{Model: s.Embedding.Model, Input: in, Header: hdr})
	}
	env.Fill(&rec, intended, &res)
	return rec
}
