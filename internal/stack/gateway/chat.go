package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/sched"
)

// generation is a chat request that an engine has started answering.
type generation struct {
	wd      *watchdog
	m       *entry
	st      engine.Stream
	first   engine.Token
	eof     bool // the engine ended before any token
	retries int
	firstAt time.Time
}

func (g *Gateway) chat(w http.ResponseWriter, r *http.Request, c *call) {
	var req chatRequest
	md, ok := c.open(w, r, "llm", &req)
	if !ok {
		return
	}
	creq, aerr := g.chatEngineRequest(&req)
	if aerr != nil {
		c.fail(w, aerr)
		return
	}
	c.model = creq.Model
	release, aerr := g.admit(md.Tenant, c.start)
	if aerr != nil {
		c.fail(w, aerr)
		return
	}
	defer release()
	p := g.pools[engine.KindLLM]
	t := newTicket(md, engine.KindLLM, creq.Model, c.start)
	if aerr := p.enqueue(t); aerr != nil {
		c.fail(w, aerr)
		return
	}
	gen, aerr := g.startGeneration(r.Context(), p, t, creq)
	if aerr != nil {
		c.fail(w, aerr)
		return
	}
	g.met.ttft.WithLabelValues(creq.Model, c.priority).Observe(gen.firstAt.Sub(c.start).Seconds())
	h := w.Header()
	h.Set(protocol.HeaderEngine, gen.m.id)
	h.Set(protocol.HeaderQueueWait, protocol.QueueWaitValue(t.waited))
	if gen.retries > 0 {
		h.Set(protocol.HeaderRetries, "1")
	}
	var engErr error
	if req.Stream {
		engErr = g.streamChat(w, r.Context(), gen, creq, req.StreamOptions != nil && req.StreamOptions.IncludeUsage, c)
	} else {
		engErr = g.collectChat(w, r.Context(), gen, creq, c)
	}
	gen.st.Close()
	gen.wd.stop()
	p.release(gen.m, engErr, g.itl(gen))
	u := gen.st.Usage()
	g.met.tokens.WithLabelValues(gen.m.id, creq.Model, "prompt").Add(float64(u.PromptTokens))
	g.met.tokens.WithLabelValues(gen.m.id, creq.Model, "completion").Add(float64(u.CompletionTokens))
	g.met.countPrefix(gen.m.id, creq.Model, u.PromptTokens, u.CachedTokens)
}

func (g *Gateway) chatEngineRequest(req *chatRequest) (engine.ChatRequest, *apiError) {
	if aerr := req.checkN(); aerr != nil {
		return engine.ChatRequest{}, aerr
	}
	prompt, msgs, aerr := renderPrompt(req.Messages)
	if aerr != nil {
		return engine.ChatRequest{}, aerr
	}
	n, aerr := req.maxTokens(g.cfg.DefaultMaxTokens, g.cfg.MaxTokens)
	if aerr != nil {
		return engine.ChatRequest{}, aerr
	}
	model, aerr := g.resolveModel(req.Model, engine.KindLLM)
	if aerr != nil {
		return engine.ChatRequest{}, aerr
	}
	return engine.ChatRequest{ID: g.ids.next("chatcmpl"), Model: model, Prompt: prompt, MaxTokens: n,
		Messages: msgs}, nil
}

func (g *Gateway) admit(tenant string, now time.Time) (func(), *apiError) {
	release, err := g.cfg.Quotas.Admit(tenant, now)
	if err != nil {
		e := &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "quota_exceeded", Message: err.Error(), RetryAfter: time.Second}
		var qe *sched.QuotaError
		if errors.As(err, &qe) && qe.RetryAfter > 0 {
			e.RetryAfter = qe.RetryAfter
		}
		return nil, e
	}
	return release, nil
}

// startGeneration waits for a slot and starts the stream, retrying once on
// another engine if the first fails before its first token.
func (g *Gateway) startGeneration(ctx context.Context, p *pool, t *ticket, creq engine.ChatRequest) (*generation, *apiError) {
	for attempt := 0; ; attempt++ {
		a := p.wait(ctx, t)
		if a.err != nil {
			return nil, a.err.afterRetry(attempt)
		}
		wd := newWatchdog(ctx, g.cfg.StallTimeout, a.m)
		st, err := a.m.eng.LLM.Generate(wd.ctx, creq)
		var tok engine.Token
		if err == nil {
			tok, err = st.Recv(wd.ctx)
			if err != nil && !isEOF(err) {
				st.Close()
			}
		}
		if err == nil || isEOF(err) {
			wd.kick()
			return &generation{wd: wd, m: a.m, st: st, first: tok, eof: err != nil, retries: attempt, firstAt: g.now()}, nil
		}
		err = wd.explain(err)
		wd.stop()
		p.release(a.m, err, 0)
		if ctx.Err() != nil {
			return nil, &apiError{Status: 499, Type: "cancelled", Code: "client_closed", Message: "client closed the request"}
		}
		if errors.Is(err, engine.ErrTooLarge) && (attempt > 0 || !p.fitsElsewhere(t.model, a.m, err)) {
			return nil, tooLarge(err).afterRetry(attempt)
		}
		if attempt > 0 {
			return nil, engineFailed(a.m.id, err).afterRetry(attempt)
		}
		g.met.retries.WithLabelValues("llm").Inc()
		g.cfg.Logger.Debug("retrying on another engine", "engine", a.m.id, "err", err)
		p.requeue(t, a.m)
	}
}

// itl is the observed time per output token after the first, for routing.
func (g *Gateway) itl(gen *generation) time.Duration {
	n := gen.st.Usage().CompletionTokens
	if n < 2 {
		return 0
	}
	return g.now().Sub(gen.firstAt) / time.Duration(n-1)
}

func (g *Gateway) collectChat(w http.ResponseWriter, ctx context.Context, gen *generation, creq engine.ChatRequest, c *call) error {
	var b strings.Builder
	if !gen.eof {
		b.WriteString(gen.first.Text)
		for {
			tok, err := gen.st.Recv(gen.wd.ctx)
			if isEOF(err) {
				break
			}
			if err != nil {
				err = gen.wd.explain(err)
				c.fail(w, engineFailed(gen.m.id, err))
				if ctx.Err() != nil {
					c.status = 499
				}
				return err
			}
			gen.wd.kick()
			b.WriteString(tok.Text)
		}
	}
	u := gen.st.Usage()
	c.answered(w.Header(), 0)
	writeJSON(w, http.StatusOK, chatResponse{
		ID: creq.ID, Object: "chat.completion", Created: g.now().Unix(), Model: creq.Model,
		Choices: []chatChoice{{Index: 0, Message: &chatMsgOut{Role: "assistant", Content: b.String()},
			FinishReason: finishReason(u.CompletionTokens, creq.MaxTokens)}},
		Usage: usageOf(u),
	})
	return nil
}

func finishReason(n, max int) string {
	if n >= max {
		return "length"
	}
	return "stop"
}

type chatResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *usageOut    `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      *chatMsgOut `json:"message,omitempty"`
	FinishReason string      `json:"finish_reason"`
}

type chatMsgOut struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type usageOut struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokensDetails *cachedDetails `json:"prompt_tokens_details,omitempty"`
}

type cachedDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func usageOf(u engine.Usage) *usageOut {
	out := &usageOut{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	if u.CachedTokens > 0 {
		out.PromptTokensDetails = &cachedDetails{CachedTokens: u.CachedTokens}
	}
	return out
}
