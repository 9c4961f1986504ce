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
// service time from the actual send).
func (env *Env) Fill(r *record.Request, intended time.Time, res *openai.Result) {
	sent := res.Sent
	if sent.IsZero() {
		sent = res.Start
	}
	r.IntendedNS, r.SentNS = env.Offset(intended), env.Offset(sent)
	r.FirstByte, r.FirstToken, r.EndNS = env.Offset(res.FirstByte), env.Offset(res.FirstToken), env.Offset(res.End)
	if len(res.Tokens) > 0 {
		r.TokenNS = make([]int64, len(res.Tokens))
		for i, t := range res.Tokens {
			r.TokenNS[i] = env.Offset(t)
		}
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
		if n := max(res.CompletionTokens, len(res.Tokens)); n > 1 && !res.End.IsZero() {
			r.TPOTMs = ms(res.End.Sub(res.FirstToken)) / float64(n-1)
		}
	}
	r.Status, r.Engine, r.Retries = res.Status, res.Engine, res.Retries
	if res.ServerOK {
		r.ServerQueueMs, r.ServerTTFTMs, r.ServerE2EMs = ms(res.Server.Queue), ms(res.Server.FirstToken), ms(res.Server.End)
	}
	r.PromptTok, r.OutputTok = res.PromptTokens, res.CompletionTokens
	r.OK = res.Err == nil
	if res.Err != nil {
		r.ErrorClass = res.ErrClass
		r.Error = ClipError(res.Err.Error())
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
