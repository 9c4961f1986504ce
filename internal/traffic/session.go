package traffic

import (
	"context"
	"strconv"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/workload"
)

// Do sends item it and hands each finished request to emit: one request,
// or, for a session item (it.Turns > 0), every turn of the session, each
// sent a think time after the previous answer ended and carrying the
// conversation so far. A session stops at its first failed turn.
func (s Shapes) Do(ctx context.Context, env *workload.Env, rec record.Request, it Item, intended time.Time, deadline time.Duration, emit func(record.Request)) {
	if it.Turns == 0 && it.In == 0 && it.Type == "llm" {
		s.LLM.setLengths(&it, s.LLM.Drawer().Draw(it.Text))
	}
	if it.Turns == 0 {
		emit(s.Send(ctx, env, rec, it, intended, deadline))
		return
	}
	s.session(ctx, env, rec, it, intended, deadline, emit)
}

// session runs the turns of a session item.
func (s Shapes) session(ctx context.Context, env *workload.Env, base record.Request, it Item, intended time.Time, deadline time.Duration, emit func(record.Request)) {
	d, synth := s.LLM.Drawer(), env.Synth()
	tok := synth.Tokenizer()
	hdr := protocolHeader(it, deadline)
	var history []openai.Message
	histTokens := 0
	if it.Group > 0 && s.LLM.Prefix != nil {
		history = append(history, openai.Message{Role: "system", Content: synth.Block(shape.GroupSeed(it.Group), s.LLM.Prefix.Tokens)})
		histTokens = s.LLM.Prefix.Tokens
	}
	in, out := it.In, it.Out
	for turn := 1; turn <= it.Turns; turn++ {
		think := 0
		if turn > 1 {
			in, out, think = d.Turn(it.Text, turn)
			intended = intended.Add(time.Duration(think) * time.Millisecond)
			if !sleepUntil(ctx, intended) {
				return
			}
		}
		seed := it.Text ^ uint64(turn)*0x51ed27
		text, given := synth.Prompt(seed, in), false
		if c := d.Conversation(it.Entry); c != nil && turn <= len(c.Turns) { // the dataset's own turn
			t := c.Turns[turn-1]
			text, in, given = t.Text, measured(d, synth, t), true
			if t.Output > 0 {
				out = t.Output
			}
		}
		user := openai.Message{Role: "user", Content: text}
		msgs := append(history[:len(history):len(history)], user)
		rec := base
		rec.ID = base.ID + "-t" + strconv.Itoa(turn)
		rec.Session, rec.Turn, rec.Type, rec.Tenant, rec.Priority = base.ID, turn, it.Type, it.Tenant, it.Priority
		rec.Model, rec.InputTokens, rec.OutputTokens, rec.PrefixGroup = s.LLM.Model, histTokens+in, out, it.Group
		switch { // with a chat template: the whole conversation rendered, as the server counts it
		case !synth.Fits():
		case given:
			rec.InputTokens = countTemplated(env, synth, msgs, rec.InputTokens)
		default:
			rec.InputTokens = fitTemplated(env, synth, msgs, rec.InputTokens, seed)
		}
		req := s.chatRequest(env, msgs, out, hdr)
		req.KeepText = true
		res := env.Target.Client().Chat(ctx, req)
		env.Fill(&rec, intended, &res)
		emit(rec)
		if res.Err != nil {
			return
		}
		answer := openai.Message{Role: "assistant", Content: res.Text}
		history = append(msgs, answer)
		histTokens = rec.InputTokens + tok.Count(res.Text)
		intended = res.End
	}
}

// sleepUntil waits for t (precisely, as the pacer waits for an arrival:
// a turn's lag counts in the run's schedule lag) or ctx; false when ctx
// ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return load.PreciseClock{}.SleepUntil(ctx, t) == nil
}
