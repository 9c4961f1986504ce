package traffic_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataset"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
)

// TestServerTokenizerTraceBlocks: with tokenizer: server (a synthesizer
// calibrated against the reference stack, which counts in a tokenizer
// and template the client never loads), a trace's hash-block prompts —
// counted, not refitted, since the blocks must stay the blocks — are the
// server's prompt_tokens too, as are plain synthesized prompts.
func TestServerTokenizerTraceBlocks(t *testing.T) {
	dir := filepath.Join("..", "chattemplate", "testdata")
	start := func(ctx context.Context, _ target.StackSpec) (string, func(context.Context) error, error) {
		cfg, err := stack.ParseConfig([]byte("listen: 127.0.0.1:0\nindex: {size: 0}\nengines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n"))
		if err != nil {
			return "", nil, err
		}
		cfg.Tokenizer, cfg.ChatTemplate = filepath.Join(dir, "llama3.tokenizer.json"), filepath.Join(dir, "llama3.tokenizer_config.json")
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
	cal, err := tgt.Calibrate(t.Context(), []string{model})
	if err != nil {
		t.Fatal(err)
	}
	synth, err := shape.NewSynth(cal)
	if err != nil {
		t.Fatal(err)
	}
	trace := traffic.LLMShape{Model: model, Shape: shape.Shape{InputTokens: shape.FixedDist(100), OutputTokens: shape.FixedDist(2)}}
	if err := trace.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	const n = 8
	sched := every(n, 20*time.Millisecond)
	for i := range n {
		sched.Entries = append(sched.Entries, dataset.Entry{Input: 80 + 40*i, Output: 2, HashIDs: []int64{1, int64(2 + i%3)}})
	}
	items := llmItems(n, &trace)
	traffic.FillTrace(items, sched, 16)
	for name, recs := range map[string][]record.Request{
		"trace blocks": runItems(t, tgt, synth, trace, sched, items),
		"synthesized":  runWith(t, tgt, synth, trace, n),
	} {
		if len(recs) != n {
			t.Fatalf("%s: %d records", name, len(recs))
		}
		for _, r := range recs {
			if !r.OK || r.PromptTok != r.InputTokens {
				t.Errorf("%s %s: ok %v, input_tokens %d, server's prompt_tokens %d (%s)", name, r.ID, r.OK, r.InputTokens, r.PromptTok, r.Error)
			}
		}
	}
	if cal.Misses() != 0 {
		t.Errorf("%d texts counted outside the calibration", cal.Misses())
	}
}
