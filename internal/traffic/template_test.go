package traffic_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/dataset"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestPromptTokensTemplatedOnEmbeddedStack: the reference stack given a
// model's tokenizer and chat template (Llama 3.1's, on the fixture
// tokenizer chattemplate checks against transformers) reports the
// templated prompt_tokens; with the same template, every request's
// input_tokens equals it — with and without a shared system prompt. The
// same requests without the template are short of the server's count by
// the template's tokens: the check can fail. Every turn of a session too:
// the whole conversation so far, rendered, is the turn's input_tokens.
func TestPromptTokensTemplatedOnEmbeddedStack(t *testing.T) {
	dir := filepath.Join("..", "chattemplate", "testdata")
	tokFile, cfgFile := filepath.Join(dir, "llama3.tokenizer.json"), filepath.Join(dir, "llama3.tokenizer_config.json")
	tok, err := tokenizer.Load(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chattemplate.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := shape.NewSynth(tok)
	if err != nil {
		t.Fatal(err)
	}
	start := func(ctx context.Context, _ target.StackSpec) (string, func(context.Context) error, error) {
		cfg, err := stack.ParseConfig([]byte("listen: 127.0.0.1:0\nindex: {size: 0}\nengines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n"))
		if err != nil {
			return "", nil, err
		}
		cfg.Tokenizer, cfg.ChatTemplate = tokFile, cfgFile
		s, err := stack.Start(ctx, cfg, stack.Options{})
		if err != nil {
			return "", nil, err
		}
		return s.URL(), s.Close, nil
	}
	tgt, err := target.Open(t.Context(), target.Config{URL: target.Embedded}, target.Options{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close(context.Background()) })
	llm := traffic.LLMShape{Model: model, Shape: shape.Shape{
		InputTokens:  shape.Dist{Kind: shape.Uniform, Min: 150, Max: 1200},
		OutputTokens: shape.FixedDist(2),
		Prefix:       &shape.Prefix{Groups: 2, Tokens: 60, Share: 0.5}}}
	if err := llm.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	recs := runWith(t, tgt, plain.WithTemplate(tpl), llm, 30)
	prefixed := 0
	for _, r := range recs {
		if !r.OK || r.PromptTok != r.InputTokens {
			t.Errorf("%s: ok %v, input_tokens %d, server's prompt_tokens %d (%s)", r.ID, r.OK, r.InputTokens, r.PromptTok, r.Error)
		}
		if r.PrefixGroup > 0 {
			prefixed++
		}
	}
	if len(recs) != 30 || prefixed == 0 {
		t.Fatalf("%d records, %d prefixed", len(recs), prefixed)
	}
	sess := llm
	sess.Sessions = &shape.Sessions{Turns: shape.FixedDist(3), OutputTokens: shape.FixedDist(6)}
	if err := sess.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, r := range runWith(t, tgt, plain.WithTemplate(tpl), sess, 4) {
		if !r.OK || r.PromptTok != r.InputTokens {
			t.Errorf("session %s: ok %v, input_tokens %d, server's prompt_tokens %d (%s)", r.ID, r.OK, r.InputTokens, r.PromptTok, r.Error)
		}
		turns = max(turns, r.Turn)
	}
	if turns != 3 {
		t.Errorf("sessions of %d turns, want 3", turns)
	}
	for _, r := range runWith(t, tgt, plain, llm, 5) {
		if r.PromptTok <= r.InputTokens {
			t.Errorf("without the template %s: input_tokens %d, prompt_tokens %d; want the server's count larger", r.ID, r.InputTokens, r.PromptTok)
		}
	}
}

// TestDatasetAndTracePromptsTemplated: a dataset's prompt (its text as
// it is) and a trace's hash-block prompt (its blocks as they are) are not
// refitted to the chat template but counted with it, so input_tokens is
// the server's templated prompt_tokens on these paths too.
func TestDatasetAndTracePromptsTemplated(t *testing.T) {
	dir := filepath.Join("..", "chattemplate", "testdata")
	tokFile, cfgFile := filepath.Join(dir, "llama3.tokenizer.json"), filepath.Join(dir, "llama3.tokenizer_config.json")
	ref := tokenizer.NewRef(tokFile)
	tok, err := ref.Get()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chattemplate.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := shape.NewSynth(tok)
	if err != nil {
		t.Fatal(err)
	}
	start := func(ctx context.Context, _ target.StackSpec) (string, func(context.Context) error, error) {
		cfg, err := stack.ParseConfig([]byte("listen: 127.0.0.1:0\nindex: {size: 0}\nengines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n"))
		if err != nil {
			return "", nil, err
		}
		cfg.Tokenizer, cfg.ChatTemplate = tokFile, cfgFile
		s, err := stack.Start(ctx, cfg, stack.Options{})
		if err != nil {
			return "", nil, err
		}
		return s.URL(), s.Close, nil
	}
	tgt, err := target.Open(t.Context(), target.Config{URL: target.Embedded}, target.Options{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close(context.Background()) })
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(path, []byte(`[{"conversations": [{"from": "human", "value": "What is a chat template, and why does it change the count?"}, {"from": "gpt", "value": "It adds role headers."}]}, {"conversations": [{"from": "human", "value": "数据集的长度以运行的分词器计算。"}, {"from": "gpt", "value": "好"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := traffic.LLMShape{Model: model, Shape: shape.Shape{InputTokens: shape.FixedDist(1), OutputTokens: shape.FixedDist(2),
		Source: &shape.Source{File: path, Format: "sharegpt"}}}
	traffic.UseTokenizer(&ds, ref)
	if err := ds.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	trace := traffic.LLMShape{Model: model, Shape: shape.Shape{InputTokens: shape.FixedDist(1), OutputTokens: shape.FixedDist(2)}}
	if err := trace.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	const n = 6
	sched := every(n, 20*time.Millisecond)
	for i := range n {
		sched.Entries = append(sched.Entries, dataset.Entry{Input: 40 + 30*i, Output: 2, HashIDs: []int64{1, int64(2 + i%2)}})
	}
	for _, tc := range []struct {
		name  string
		llm   traffic.LLMShape
		items func() []traffic.Item
	}{
		{"dataset", ds, func() []traffic.Item { return llmItems(n, &ds) }},
		{"trace", trace, func() []traffic.Item {
			items := llmItems(n, &trace)
			traffic.FillTrace(items, sched, 16)
			return items
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, synth := range []*shape.Synth{plain.WithTemplate(tpl), plain} {
				recs := runItems(t, tgt, synth, tc.llm, sched, tc.items())
				if len(recs) != n {
					t.Fatalf("%d records, want %d", len(recs), n)
				}
				for _, r := range recs {
					switch {
					case !r.OK:
						t.Errorf("%s: %s", r.ID, r.Error)
					case synth.Template() != nil && r.PromptTok != r.InputTokens:
						t.Errorf("%s: input_tokens %d, the server's templated prompt_tokens %d", r.ID, r.InputTokens, r.PromptTok)
					case synth.Template() == nil && r.PromptTok <= r.InputTokens:
						t.Errorf("without the template %s: input_tokens %d, prompt_tokens %d; want the server's larger", r.ID, r.InputTokens, r.PromptTok)
					}
				}
			}
		})
	}
}

func runItems(t *testing.T, tgt *target.Target, synth *shape.Synth, llm traffic.LLMShape, sched load.Schedule, items []traffic.Item) []record.Request {
	t.Helper()
	var mu sync.Mutex
	var recs []record.Request
	env := &workload.Env{Target: tgt, Start: time.Now(), Log: io.Discard, Sent: func() {}, FineGap: -1, Prompts: synth,
		Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	traffic.Phase{Name: "p", Schedule: sched, Items: items, Shapes: traffic.Shapes{LLM: llm}}.Run(ctx, env, 0)
	return recs
}

func runWith(t *testing.T, tgt *target.Target, synth *shape.Synth, llm traffic.LLMShape, n int) []record.Request {
	t.Helper()
	var mu sync.Mutex
	var recs []record.Request
	env := &workload.Env{Target: tgt, Start: time.Now(), Log: io.Discard, Sent: func() {}, FineGap: -1, Prompts: synth,
		Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	traffic.Phase{Name: "p", Schedule: every(n, 20*time.Millisecond), Items: llmItems(n, &llm), Shapes: traffic.Shapes{LLM: llm}}.Run(ctx, env, 0)
	slices.SortFunc(recs, func(a, b record.Request) int { return strings.Compare(a.ID, b.ID) })
	return recs
}
