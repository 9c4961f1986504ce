package traffic_test

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/stack/sim"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestEmbeddingTokensInTheEmbeddingTokenizer: with an embedding
// tokenizer (a BERT WordPiece tokenizer.json) the reference stack's
// embedder counts each input in it, and every embedding record's
// input_tokens — the harness's count in the same tokenizer — equals the
// server's usage.prompt_tokens; that count is not the word count the
// stack makes without one. Without one, input_tokens is not recorded.
func TestEmbeddingTokensInTheEmbeddingTokenizer(t *testing.T) {
	wp := tokenizer.NewRef(filepath.Join("..", "tokenizer", "testdata", "parity", "wordpiece.json"))
	if _, err := wp.Get(); err != nil {
		t.Fatal(err)
	}
	const stackYAML = "index: {size: 0}\nengines:\n  - {id: embed-0, kind: embedding, profile: bge-small-cpu}\n"
	emb := traffic.EmbedShape{Model: "BAAI/bge-small-en-v1.5", Inputs: 3, Words: 40}
	for _, tc := range []struct {
		name    string
		ref     *tokenizer.Ref
		counted bool
	}{
		{"wordpiece", wp, true},
		{"none", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt, err := target.Open(t.Context(), target.Config{URL: target.Embedded},
				target.Options{Start: target.EmbeddedStack(nil), StackYAML: []byte(stackYAML), EmbeddingTokenizer: tc.ref})
			if err != nil {
				t.Fatal(err)
			}
			defer tgt.Close(context.Background())
			items := make([]traffic.Item, 8)
			for i := range items {
				items[i] = traffic.Item{Type: protocol.TypeEmbedding, Tenant: "t", Priority: protocol.PriorityNormal, Text: uint64(i)*7919 + 1}
			}
			var mu sync.Mutex
			var recs []record.Request
			env := &workload.Env{Target: tgt, Start: time.Now(), Log: io.Discard, Sent: func() {}, FineGap: -1, EmbeddingTokenizer: tc.ref,
				Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			traffic.Phase{Name: "p", Schedule: every(len(items), 10*time.Millisecond), Items: items, Shapes: traffic.Shapes{Embedding: emb}}.Run(ctx, env, 0)
			if len(recs) != len(items) {
				t.Fatalf("%d records, want %d", len(recs), len(items))
			}
			var got, want, simWords []int // per request, in order of size
			tok, err := tc.ref.Get()
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				n, w := 0, 0
				for k := range emb.Inputs {
					text := traffic.Words(it.Text+uint64(k), emb.Words)
					n, w = n+tok.Count(text), w+max(sim.CountTokens(text), 1)
				}
				want, simWords = append(want, n), append(simWords, w)
			}
			if !tc.counted {
				want = simWords
			}
			for _, r := range recs {
				got = append(got, r.PromptTok)
				switch {
				case !r.OK:
					t.Errorf("%s: %s", r.ID, r.Error)
				case tc.counted && r.InputTokens != r.PromptTok:
					t.Errorf("%s: input_tokens %d, the server counted %d", r.ID, r.InputTokens, r.PromptTok)
				case !tc.counted && r.InputTokens != 0:
					t.Errorf("%s: input_tokens %d without an embedding tokenizer, want none", r.ID, r.InputTokens)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			slices.Sort(simWords)
			if !slices.Equal(got, want) {
				t.Errorf("the server counted %v tokens, want %v", got, want)
			}
			if tc.counted && slices.Equal(want, simWords) {
				t.Fatal("the fixture counts alike in WordPiece and in simulated words: it tells nothing")
			}
		})
	}
}
