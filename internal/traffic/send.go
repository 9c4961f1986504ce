package traffic

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/dataset"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// Item is the drawn shape of one request.
type Item struct {
	Type, Tenant, Priority string
	Text                   uint64 // seed of the request's text
	// In and Out are an LLM request's intended input and output tokens,
	// Group its prefix group (1-based; 0: none) and Turns its number of
	// turns when it opens a session (LLMShape.Fill draws them; a zero In
	// is drawn at send time).
	In, Out, Group, Turns int `json:",omitempty"`
	// Blocks are the prefix blocks of a trace request (Mooncake hash_ids),
	// BlockTokens long each: requests naming the same blocks share them.
	Blocks      []int64 `json:",omitempty"`
	BlockTokens int     `json:",omitempty"`
	// Entry is the dataset conversation the request replays (1-based;
	// 0: a synthesized prompt).
	Entry int `json:",omitempty"`
}

// Shapes are the request shapes Send uses for each type.
type Shapes struct {
	LLM       LLMShape
	Embedding EmbedShape
}

// Send performs one request of it's type with the protocol headers
// (tenant, priority, type and, when deadline > 0, the SLO deadline) and
// returns rec completed with the call's timing, status and usage. rec
// carries the caller's identity fields (ID, Seq, Kind, Phase). A session
// item sends its first turn only: Do sends them all.
func (s Shapes) Send(ctx context.Context, env *workload.Env, rec record.Request, it Item, intended time.Time, deadline time.Duration) record.Request {
	hdr := protocolHeader(it, deadline)
	rec.Type, rec.Tenant, rec.Priority = it.Type, it.Tenant, it.Priority
	var res openai.Result
	if it.Type == protocol.TypeLLM {
		req := s.chat(env, &rec, &it, hdr)
		res = env.Target.Client().Chat(ctx, req)
	} else {
		rec.Model = s.Embedding.Model
		in := make([]string, s.Embedding.Inputs)
		for k := range in {
			in[k] = Words(it.Text+uint64(k), s.Embedding.Words)
		}
		rec.InputTokens = embedTokens(env, in)
		res = env.Target.Client().Embed(ctx, openai.EmbedRequest{Model: s.Embedding.Model, Input: in, Header: hdr})
	}
	env.Fill(&rec, intended, &res)
	return rec
}

// chat builds the first (or only) request of an LLM item: the prefix
// group's system prompt, then a user prompt of it.In tokens.
func (s Shapes) chat(env *workload.Env, rec *record.Request, it *Item, hdr http.Header) openai.ChatRequest {
	if it.In == 0 {
		s.LLM.setLengths(it, s.LLM.Drawer().Draw(it.Text))
	}
	synth := env.Synth()
	user := userPrompt(synth, it)
	if c := s.LLM.Drawer().Conversation(it.Entry); c != nil {
		user, it.In = c.Turns[0].Text, measured(s.LLM.Drawer(), synth, c.Turns[0])
	}
	msgs := make([]openai.Message, 0, 2)
	in := it.In
	if it.Group > 0 && s.LLM.Prefix != nil {
		msgs = append(msgs, openai.Message{Role: "system", Content: synth.Block(shape.GroupSeed(it.Group), s.LLM.Prefix.Tokens)})
		in += s.LLM.Prefix.Tokens
		rec.PrefixGroup = it.Group
	}
	msgs = append(msgs, openai.Message{Role: "user", Content: user})
	switch {
	case !synth.Fits():
	case it.Entry == 0 && len(it.Blocks) == 0:
		in = fitTemplated(env, synth, msgs, in, it.Text)
	default: // a dataset's text or a trace's blocks: as they are, counted templated
		in = countTemplated(env, synth, msgs, in)
	}
	rec.Model, rec.InputTokens, rec.OutputTokens = s.LLM.Model, in, it.Out
	return s.chatRequest(env, msgs, it.Out, hdr)
}

// fitTemplated refits the user message so that the conversation rendered
// with the run's chat template is in tokens (the server's prompt_tokens)
// and returns that count: in, unless the template alone is longer.
func fitTemplated(env *workload.Env, synth *shape.Synth, msgs []openai.Message, in int, seed uint64) int {
	cm := chattemplate.Messages(msgs)
	got, _, err := synth.FitChat(cm, in, seed)
	if err != nil {
		if env.Log != nil {
			fmt.Fprintf(env.Log, "chat template: %v\n", err)
		}
		return in
	}
	msgs[len(msgs)-1].Content = cm[len(cm)-1].Content
	return got
}

// countTemplated is the count of msgs rendered with the run's chat
// template (the server's prompt_tokens): a prompt whose text is given —
// a dataset's, or a trace's hash blocks, whose content must stay the
// blocks' — is not refitted, only counted as the server will. in when
// the template fails to render.
func countTemplated(env *workload.Env, synth *shape.Synth, msgs []openai.Message, in int) int {
	n, err := synth.CountChat(chattemplate.Messages(msgs))
	if err != nil {
		if env.Log != nil {
			fmt.Fprintf(env.Log, "chat template: %v\n", err)
		}
		return in
	}
	return n
}

// chatRequest is a chat completion of msgs generating out tokens, with
// the target's output control (ignore_eos, min_tokens).
func (s Shapes) chatRequest(env *workload.Env, msgs []openai.Message, out int, hdr http.Header) openai.ChatRequest {
	req := openai.ChatRequest{Model: s.LLM.Model, MaxTokens: out, Messages: msgs,
		Stream: s.LLM.Stream, IncludeUsage: s.LLM.Stream, Header: hdr}
	ctl := env.Target.OutputControl()
	req.IgnoreEOS = ctl.IgnoreEOS
	if ctl.MinTokens {
		req.MinTokens = out
	}
	return req
}

// Canonical forms of the protocol header names (TestCanonicalNames), so
// that a request's header is built without canonicalising per request.
const (
	keyTenant   = "X-Tenant-Id"
	keyPriority = "X-Request-Priority"
	keyType     = "X-Request-Type"
	keyDeadline = "X-Slo-Deadline-Ms"
)

// protocolHeader is the header of one request: tenant, priority, type
// and, when deadline > 0, the SLO deadline (protocol.SetDeadline's
// value), in one map and one backing array.
func protocolHeader(it Item, deadline time.Duration) http.Header {
	vals := make([]string, 4)
	vals[0], vals[1], vals[2] = it.Tenant, it.Priority, it.Type
	h := make(http.Header, 4)
	h[keyTenant], h[keyPriority], h[keyType] = vals[0:1:1], vals[1:2:2], vals[2:3:3]
	if v := protocol.DeadlineValue(deadline); v != "" {
		vals[3] = v
		h[keyDeadline] = vals[3:4:4]
	}
	return h
}

// RequestID is a request's record ID, "<phase>-<seq>" with seq padded to
// five digits (fmt's "%s-%05d", without its cost per request).
func RequestID(phase string, seq int) string {
	if seq < 0 {
		return fmt.Sprintf("%s-%05d", phase, seq)
	}
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(seq), 10)
	var b strings.Builder // one allocation: the ID itself
	b.Grow(len(phase) + 1 + max(len(d), 5))
	b.WriteString(phase)
	b.WriteByte('-')
	for range 5 - len(d) {
		b.WriteByte('0')
	}
	b.Write(d)
	return b.String()
}

// userPrompt is the user message of it: its trace blocks (each the same
// text wherever it appears) then fresh text, or a synthesized prompt,
// it.In tokens in all.
func userPrompt(synth *shape.Synth, it *Item) string {
	if len(it.Blocks) == 0 || it.BlockTokens < 1 {
		return synth.Prompt(it.Text, it.In)
	}
	var b strings.Builder
	left := it.In
	for _, id := range it.Blocks {
		if left <= 0 {
			break
		}
		n := min(left, it.BlockTokens)
		b.WriteString(synth.Block(uint64(id), n))
		left -= n
	}
	if left > 0 {
		b.WriteString(synth.Prompt(it.Text, left))
	}
	return b.String()
}

// measured is a dataset turn's input length in the run's tokenizer: as
// read, unless the dataset was measured in another one (a shape that
// was not given the run's tokenizer, UseTokenizer).
func measured(d *shape.Drawer, synth *shape.Synth, t dataset.Turn) int {
	if tok := synth.Tokenizer(); !d.MeasuredIn(tok) {
		return tok.Count(t.Text)
	}
	return t.Input
}

// embedTokens is the inputs' length in the run's embedding tokenizer (0,
// not counted, without one): each input counted alone with the special
// tokens the tokenizer's post-processor adds ([CLS], [SEP]), as an
// embedding server counts them.
func embedTokens(env *workload.Env, in []string) int {
	if env.EmbeddingTokenizer == nil {
		return 0
	}
	tok, err := env.EmbeddingTokenizer.Get() // loaded before the run began
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range in {
		n += tokenizer.CountWithSpecialTokens(tok, s)
	}
	return n
}
