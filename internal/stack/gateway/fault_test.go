package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/stack/sim"
)

// paceEmbedder takes perInput for every input of a call, like a real
// engine working through its batches, and answers only at the end.
type paceEmbedder struct {
	fakeEmbedder
	perInput time.Duration
}

func (p *paceEmbedder) Embed(ctx context.Context, inputs []string) ([][]float32, engine.Usage, error) {
	select {
	case <-time.After(time.Duration(len(inputs)) * p.perInput):
	case <-ctx.Done():
		return nil, engine.Usage{}, ctx.Err()
	}
	return p.fakeEmbedder.Embed(ctx, inputs)
}

// TestLargeEmbeddingBatchIsNotAStall is the 2,040-input request:
// legal, but longer than the stall timeout in all. It used to end in 503
// with the healthy engine ejected; now it is split into batch-sized calls
// whose answers count as progress.
func TestLargeEmbeddingBatchIsNotAStall(t *testing.T) {
	emb := &paceEmbedder{fakeEmbedder: fakeEmbedder{id: "emb", model: "m-emb", slots: 4}, perInput: 4 * time.Millisecond}
	// 400 inputs × 4 ms = 1.6 s in one call against a 400 ms stall
	// timeout; a call of 8 inputs takes 32 ms.
	h := newHarness(t, Config{StallTimeout: 400 * time.Millisecond, MaxBatch: 8}, map[string]Member{"emb": {Embedder: emb}})
	inputs := make([]string, 400)
	for i := range inputs {
		inputs[i] = strings.Repeat("w ", 1+i%50)
	}
	body, _ := json.Marshal(map[string]any{"model": "m-emb", "input": inputs})
	r := h.do("POST", "/v1/embeddings", string(body), nil)
	var got struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil || r.status != 200 || len(got.Data) != len(inputs) {
		t.Fatalf("status %d, %d vectors (%v): %.200s", r.status, len(got.Data), err, r.body)
	}
	for i, d := range got.Data {
		if d.Index != i || d.Embedding[0] != float32(len(inputs[i])) {
			t.Fatalf("vector %d is %v (index %d), want the one of input %d", i, d.Embedding, d.Index, i)
		}
	}
	if st := stateOf(h, "emb"); st != "active" {
		t.Fatalf("engine state %q after a legal large batch, want active", st)
	}
	for _, n := range emb.callSizes() {
		if n > 8 {
			t.Fatalf("an engine call carried %d inputs (MaxBatch 8)", n)
		}
	}
}

func TestEmbedCallSize(t *testing.T) {
	big := strings.Repeat("x", embedCallBytes/2+1)
	tests := []struct {
		name   string
		inputs []string
		max    int
		want   int
	}{
		{"small list", []string{"a", "b"}, 64, 2},
		{"count cap", make([]string, 100), 64, 64},
		{"byte cap", []string{big, big, big}, 64, 1},
		{"one huge input still goes", []string{strings.Repeat("x", 2*embedCallBytes)}, 64, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := embedCallSize(tc.inputs, tc.max); got != tc.want {
				t.Fatalf("embedCallSize = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestPromptOverKVBudgetIs400 is the prompt longer than the
// engines' KV capacity: it used to be retried on both engines and end in
// 502. It is the client's error: 400 with the reason, one engine tried
// when no other could ever hold it, and no engine blamed.
func TestPromptOverKVBudgetIs400(t *testing.T) {
	p := profile.LLM{Name: "small", Model: "m-llm", MaxNumSeqs: 4, KVCacheTokens: 256, KVBlockTokens: 16, MaxWaiting: 8,
		PrefillPerToken: time.Microsecond, PrefillChunk: 64, StepBase: time.Millisecond, StepPerSeq: time.Microsecond, DefaultMaxTokens: 8}
	a, b := sim.NewLLM("a", p, sim.Options{Seed: 1}), sim.NewLLM("b", p, sim.Options{Seed: 2})
	t.Cleanup(func() { a.Close(); b.Close() })
	h := newHarness(t, Config{EjectAfter: 1}, map[string]Member{"a": {LLM: a}, "b": {LLM: b}})
	prompt := strings.Repeat("word ", 1000)
	r := h.do("POST", "/v1/chat/completions", chatBody(prompt, 8, false), nil)
	body := string(r.body)
	if r.status != 400 || !strings.Contains(body, "context_length_exceeded") || !strings.Contains(body, "KV") {
		t.Fatalf("status %d: %s; want 400 context_length_exceeded naming the KV budget", r.status, body)
	}
	if r.header.Get("X-Sagebench-Retries") != "" {
		t.Errorf("retried on another engine that is no bigger")
	}
	for _, id := range []string{"a", "b"} {
		if st := stateOf(h, id); st != "active" {
			t.Errorf("engine %s is %q after a client error, want active", id, st)
		}
	}
	if r := h.do("POST", "/v1/chat/completions", chatBody("short", 4, false), nil); r.status != 200 {
		t.Fatalf("a fitting request after it: %d %s", r.status, r.body)
	}
}

// TestTooLargeTriesABiggerEngine: with heterogeneous engines, the request
// goes to the one that can hold it.
func TestTooLargeTriesABiggerEngine(t *testing.T) {
	p := profile.LLM{Name: "small", Model: "m-llm", MaxNumSeqs: 4, KVCacheTokens: 256, KVBlockTokens: 16, MaxWaiting: 8,
		PrefillPerToken: time.Microsecond, PrefillChunk: 64, StepBase: time.Millisecond, StepPerSeq: time.Microsecond, DefaultMaxTokens: 8}
	bigP := p
	bigP.Name, bigP.KVCacheTokens = "big", 1<<16
	small, big := sim.NewLLM("a-small", p, sim.Options{}), sim.NewLLM("b-big", bigP, sim.Options{})
	t.Cleanup(func() { small.Close(); big.Close() })
	h := newHarness(t, Config{}, map[string]Member{"a-small": {LLM: small, Speed: time.Microsecond}, "b-big": {LLM: big, Speed: time.Second}})
	r := h.do("POST", "/v1/chat/completions", chatBody(strings.Repeat("word ", 1000), 4, false), map[string]string{"X-Request-Priority": "critical"})
	if r.status != 200 || r.header.Get("X-Engine-Id") != "b-big" {
		t.Fatalf("status %d from %q: %s; want 200 from b-big", r.status, r.header.Get("X-Engine-Id"), r.body)
	}
	if st := stateOf(h, "a-small"); st != "active" {
		t.Errorf("a-small is %q, want active", st)
	}
}
