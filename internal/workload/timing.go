package workload

import (
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
)

// maxErrorText bounds the error text kept in a record.
const maxErrorText = 300

// Fill copies the timing, status and usage of res into r: offsets
// from env.Start, latencies in ms (E2E and TTFT from the intended send,
// service time from the actual send; TPOT from the tokens actually
// timed, never from usage counts that include tokens never streamed).
func (env *Env) Fill(r *record.Request, intended time.Time, res *openai.Result) {
	sent := res.Sent
	if sent.IsZero() {
		sent = res.Start
	}
	r.IntendedNS, r.SentNS = env.Offset(intended), env.Offset(sent)
	r.FirstByte, r.FirstToken, r.EndNS = env.Offset(res.FirstByte), env.Offset(res.FirstToken), env.Offset(res.End)
	r.FirstAnswerToken = env.Offset(res.FirstAnswerToken)
	if len(res.Tokens) > 0 {
		r.TokenNS = make([]int64, len(res.Tokens))
		for i, t := range res.Tokens {
			r.TokenNS[i] = env.Offset(t)
		}
		r.TokenNSDropped = res.TokensDropped
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	if !res.End.IsZero() {
		r.E2EMs = ms(res.End.Sub(intended))
		if !sent.IsZero() {
			r.ServiceMs = ms(res.End.Sub(sent))
		}
	}
	if !sent.IsZero() {
		r.LagMs = ms(sent.Sub(intended))
	}
	if !res.FirstToken.IsZero() {
		r.TTFTMs = ms(res.FirstToken.Sub(intended))
		r.TPOTMs = ms(res.TimePerToken())
	}
	if !res.FirstAnswerToken.IsZero() {
		r.TTFATMs = ms(res.FirstAnswerToken.Sub(intended))
	}
	r.Status, r.Engine, r.Retries = res.Status, res.Engine, res.Retries
	env.fillAttempts(r, res)
	if res.ServerOK {
		r.ServerTTFTMs, r.ServerE2EMs = ms(res.Server.FirstToken), ms(res.Server.End)
	}
	if res.QueueKnown {
		q := ms(res.QueueWait)
		r.QueueMs = &q
	}
	r.PromptTok, r.OutputTok = res.PromptTokens, res.CompletionTokens
	r.OK = res.Err == nil
	r.Note = res.Note
	if res.Err != nil {
		r.ErrorClass = res.ErrClass
		r.Error = ClipError(res.Err.Error())
	}
}

// fillAttempts copies the client's attempts of res into r.
func (env *Env) fillAttempts(r *record.Request, res *openai.Result) {
	r.Attempt, r.Attempts, r.Replays = res.Attempt, res.Attempts, res.Replays
	if len(res.Tries) == 0 {
		return
	}
	r.Tries = make([]record.Try, len(res.Tries))
	for i, t := range res.Tries {
		r.Tries[i] = record.Try{N: t.N, Hedge: t.Hedge, Superseded: t.Superseded, SentNS: env.Offset(t.Sent),
			EndNS: env.Offset(t.End), Status: t.Status, ErrorClass: t.ErrClass, Replays: t.Replays}
	}
}

// ClipError bounds an error text for a record: at most maxErrorText bytes
// of valid UTF-8, "…" when cut.
func ClipError(s string) string {
	if len(s) > maxErrorText {
		return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
	}
	return s
}
