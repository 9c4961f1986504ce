package workload

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
)

// maxErrorText bounds the error text kept in a record.
const maxErrorText = 300

// fillTiming copies the timing, status and usage of res into r: offsets
// from env.Start, latencies in ms (E2E and TTFT from the intended send,
// service time from the actual send).
func fillTiming(r *record.Request, env *Env, intended time.Time, res *openai.Result) {
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
	r.PromptTok, r.OutputTok = res.PromptTokens, res.CompletionTokens
	r.OK = res.Err == nil
	if res.Err != nil {
		r.ErrorClass = res.ErrClass
		r.Error = res.Err.Error()
		if len(r.Error) > maxErrorText {
			r.Error = strings.ToValidUTF8(r.Error[:maxErrorText], "") + "…"
		}
	}
}

// vocabulary of the synthetic prompts.
var vocabulary = strings.Fields(`the a of to and in is for on with as by at from that this it be are was
model system request token engine batch queue cache latency throughput policy tenant priority
service level objective schedule gateway router stream embedding vector index retrieve generate
answer question context document summary benchmark load burst steady fair share deadline`)

// words returns n deterministic pseudo-random words from seed.
func words(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x776f726473))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}
