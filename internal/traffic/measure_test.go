package traffic_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestDatasetMeasuredInTheRunsTokenizer: a ShareGPT source given the
// run's tokenizer (UseTokenizer, as config resolution does) is measured in
// it — the prompt's and the reference answer's lengths are that
// tokenizer's in the drawn items and in the records — and the sender does
// not count again; without it the answer's length stays the default
// tokenizer's while the prompt is counted again as it is sent.
func TestDatasetMeasuredInTheRunsTokenizer(t *testing.T) {
	const q, a = "数据集的长度以运行的分词器计算，不是默认的。", "答案的长度也一样：以同一个分词器计算。"
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(path, []byte(`[{"conversations": [{"from": "human", "value": "`+q+`"}, {"from": "gpt", "value": "`+a+`"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	o200k, err := tokenizer.Load(tokenizer.O200K)
	if err != nil {
		t.Fatal(err)
	}
	def := tokenizer.Default()
	if o200k.Count(q) == def.Count(q) || o200k.Count(a) == def.Count(a) {
		t.Fatalf("the fixture counts alike in both tokenizers (%d, %d): it tells nothing", o200k.Count(q), o200k.Count(a))
	}
	synth, err := shape.NewSynth(o200k)
	if err != nil {
		t.Fatal(err)
	}
	var c capture
	tgt, err := target.Open(context.Background(), target.Config{URL: c.serve(t)}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close(context.Background())
	for _, tc := range []struct {
		name    string
		measure bool
		in, out int // in the records
	}{
		{"measured in the run's tokenizer", true, o200k.Count(q), o200k.Count(a)},
		{"measured in the default", false, o200k.Count(q), def.Count(a)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := traffic.LLMShape{Model: "m", Shape: shape.Shape{InputTokens: shape.FixedDist(1), OutputTokens: shape.FixedDist(1),
				Source: &shape.Source{File: path, Format: "sharegpt"}}}
			if tc.measure {
				traffic.UseTokenizer(&llm, tokenizer.RefOf(tokenizer.O200K, o200k))
			}
			if err := llm.Validate("test.llm"); err != nil {
				t.Fatal(err)
			}
			if got := llm.Drawer().MeasuredIn(o200k); got != tc.measure {
				t.Errorf("MeasuredIn(o200k_base) = %v, want %v", got, tc.measure)
			}
			items := llmItems(3, &llm)
			if tc.measure && (items[0].In != tc.in || items[0].Out != tc.out) {
				t.Errorf("drawn %d→%d tokens, want %d→%d", items[0].In, items[0].Out, tc.in, tc.out)
			}
			var mu sync.Mutex
			var recs []record.Request
			env := &workload.Env{Target: tgt, Start: time.Now(), Log: io.Discard, Sent: func() {}, FineGap: -1, Prompts: synth,
				Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
			traffic.Phase{Name: "p", Schedule: every(3, time.Millisecond), Items: items, Shapes: traffic.Shapes{LLM: llm}}.Run(t.Context(), env, 0)
			if len(recs) != 3 {
				t.Fatalf("%d records, want 3", len(recs))
			}
			for _, r := range recs {
				if r.InputTokens != tc.in || r.OutputTokens != tc.out {
					t.Errorf("%s: %d→%d tokens, want %d→%d", r.ID, r.InputTokens, r.OutputTokens, tc.in, tc.out)
				}
			}
		})
	}
}
