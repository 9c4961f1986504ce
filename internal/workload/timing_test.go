package workload

import (
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
)

// TestFillTokenTimes: TTFT counts from the first token of any kind, TTFAT
// from the first answer token, and TPOT from the tokens actually timed,
// whatever the usage count says.
func TestFillTokenTimes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name              string
		res               openai.Result
		ttft, ttfat, tpot float64
		dropped           int
		note              string
	}{
		{"reasoning model: 3 reasoning then 2 answer tokens, usage counts 50",
			openai.Result{Start: at(0), FirstByte: at(40), FirstToken: at(51), FirstAnswerToken: at(81), End: at(300),
				Tokens: []time.Time{at(51), at(61), at(71), at(81), at(91)}, TokenCount: 5, CompletionTokens: 50},
			51, 81, 10, 0, ""},
		{"plain stream without [DONE]",
			openai.Result{Start: at(0), FirstToken: at(20), FirstAnswerToken: at(20), End: at(45),
				Tokens: []time.Time{at(20), at(25), at(30)}, TokenCount: 3, CompletionTokens: 3, Note: openai.NoteNoDone},
			20, 20, 5, 0, openai.NoteNoDone},
		{"times bounded: the last slot is the latest token",
			openai.Result{Start: at(0), FirstToken: at(10), FirstAnswerToken: at(10), End: at(200),
				Tokens: []time.Time{at(10), at(12), at(110)}, TokenCount: 51, TokensDropped: 48, CompletionTokens: 51},
			10, 10, 2, 48, ""},
		{"one token: no TPOT",
			openai.Result{Start: at(0), FirstToken: at(10), FirstAnswerToken: at(10), End: at(20),
				Tokens: []time.Time{at(10)}, TokenCount: 1, CompletionTokens: 7},
			10, 10, 0, 0, ""},
	}
	env := &Env{Start: t0}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r record.Request
			env.Fill(&r, t0, &tc.res)
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"ttft", r.TTFTMs, tc.ttft}, {"ttfat", r.TTFATMs, tc.ttfat}, {"tpot", r.TPOTMs, tc.tpot}} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s = %v ms, want %v", c.name, c.got, c.want)
				}
			}
			if r.TokenNSDropped != tc.dropped || r.Note != tc.note || len(r.TokenNS) != len(tc.res.Tokens) {
				t.Errorf("dropped %d note %q %d times; want %d %q %d", r.TokenNSDropped, r.Note, len(r.TokenNS), tc.dropped, tc.note, len(tc.res.Tokens))
			}
			if want := env.Offset(tc.res.FirstAnswerToken); r.FirstAnswerToken != want {
				t.Errorf("first_answer_token_ns %d, want %d", r.FirstAnswerToken, want)
			}
		})
	}
}
