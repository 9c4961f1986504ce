package traffic_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
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
// embedder counts each input in it — with the [CLS] and [SEP] a BERT
// post-processor adds, as a real embedding server does — and every embedding record's
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
	bert := tokenizer.NewRef(withPostProcessor(t, filepath.Join("..", "tokenizer", "testdata", "parity", "wordpiece.json"),
		`{"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}`))
	for _, tc := range []struct {
		name    string
		ref     *tokenizer.Ref
		counted bool
		special int // per input
	}{
		{"wordpiece", wp, true, 0},
		{"wordpiece_bert_post_processor", bert, true, 2},
		{"none", nil, false, 0},
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
					n, w = n+tok.Count(text)+tc.special, w+max(sim.CountTokens(text), 1)
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

// withPostProcessor writes a copy of the tokenizer.json at path with the
// given post_processor and returns the copy's path.
func withPostProcessor(t *testing.T, path, post string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f["post_processor"] = json.RawMessage(post)
	if b, err = json.Marshal(f); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
