package fleet_test

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/fleet"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestFleetNodesFitToTheChatTemplate: with --nodes and a chat template,
// the plan carries the template, so every node fits its prompts to it:
// against the reference stack rendering the same template, every
// record's input_tokens is the server's templated prompt_tokens.
func TestFleetNodesFitToTheChatTemplate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	dir := filepath.Join("..", "chattemplate", "testdata")
	tokFile, cfgFile := filepath.Join(dir, "llama3.tokenizer.json"), filepath.Join(dir, "llama3.tokenizer_config.json")
	cfg, err := stack.ParseConfig([]byte("listen: 127.0.0.1:0\nindex: {size: 0}\nengines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tokenizer, cfg.ChatTemplate = tokFile, cfgFile
	s, err := stack.Start(t.Context(), cfg, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	c, _ := startFleetConfig(t, 2, fleet.NodeConfig{Target: func(ctx context.Context, cs fleet.ClientSettings) (*target.Target, error) {
		return target.Open(ctx, cs.Apply(target.Config{URL: s.URL()}), target.Options{})
	}})
	ref := tokenizer.NewRef(tokFile)
	tok, err := ref.Get()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chattemplate.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	synth, err := shape.NewSynth(tok)
	if err != nil {
		t.Fatal(err)
	}
	ph := tinyPhase(t, "tpl", 8)
	ph.Shapes.LLM.Model = "meta-llama/Llama-3.1-8B-Instruct"
	var mu sync.Mutex
	var recs []record.Request
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c, Prompts: synth.WithTemplate(tpl), Tokenizer: ref,
		Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
	for i := range ph.Items {
		ph.Items[i].In, ph.Items[i].Out = 100+37*i, 2
	}
	if sp := ph.Run(context.Background(), env, 0); sp.Interrupted {
		t.Fatalf("phase %+v: %v", sp, c.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for _, r := range recs {
		if !r.OK || r.InputTokens == 0 || r.InputTokens != r.PromptTok || r.Node == "" {
			t.Errorf("%s (node %q): ok %v, input_tokens %d, the server's templated prompt_tokens %d (%s)", r.ID, r.Node, r.OK, r.InputTokens, r.PromptTok, r.Error)
		}
	}
}

// TestFleetNodesCountEmbeddingInputs: with --nodes and an embedding
// tokenizer, the plan names it, so every node records its embedding
// requests' input_tokens in it: the reference stack's embedder, counting
// in the same WordPiece file, reports the same prompt_tokens.
func TestFleetNodesCountEmbeddingInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	wp, err := filepath.Abs(filepath.Join("..", "tokenizer", "testdata", "parity", "wordpiece.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := stack.ParseConfig([]byte("listen: 127.0.0.1:0\nindex: {size: 0}\nengines:\n  - {id: embed-0, kind: embedding, profile: bge-small-cpu}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.EmbeddingTokenizer = wp
	s, err := stack.Start(t.Context(), cfg, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	c, _ := startFleetConfig(t, 2, fleet.NodeConfig{Target: func(ctx context.Context, cs fleet.ClientSettings) (*target.Target, error) {
		return target.Open(ctx, cs.Apply(target.Config{URL: s.URL()}), target.Options{})
	}})
	ph := tinyPhase(t, "emb", 8)
	ph.Shapes.Embedding = traffic.EmbedShape{Model: "BAAI/bge-small-en-v1.5", Inputs: 2, Words: 30}
	for i := range ph.Items {
		ph.Items[i].Type = protocol.TypeEmbedding
	}
	var mu sync.Mutex
	var recs []record.Request
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c, Prompts: shape.DefaultSynth(), EmbeddingTokenizer: tokenizer.NewRef(wp),
		Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
	if sp := ph.Run(context.Background(), env, 0); sp.Interrupted {
		t.Fatalf("phase %+v: %v", sp, c.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for _, r := range recs {
		if !r.OK || r.InputTokens == 0 || r.InputTokens != r.PromptTok || r.Node == "" {
			t.Errorf("%s (node %q): ok %v, input_tokens %d, the embedder's prompt_tokens %d (%s)", r.ID, r.Node, r.OK, r.InputTokens, r.PromptTok, r.Error)
		}
	}
}
