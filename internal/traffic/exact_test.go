package traffic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

const model = "meta-llama/Llama-3.1-8B-Instruct"

// embedded starts the reference stack with one H100 LLM engine (its
// profile changed by tweak, when set) and opens it as a target.
func embedded(t *testing.T, tweak func(*profile.LLM)) *target.Target {
	t.Helper()
	cat, err := profile.Default()
	if err != nil {
		t.Fatal(err)
	}
	for i := range cat.LLMs {
		if tweak != nil {
			tweak(&cat.LLMs[i])
		}
	}
	start := func(ctx context.Context, _ target.StackSpec) (string, func(context.Context) error, error) {
		cfg, err := stack.ParseConfig([]byte("listen: 127.0.0.1:0\nindex: {size: 0}\nengines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n"))
		if err != nil {
			return "", nil, err
		}
		s, err := stack.Start(ctx, cfg, stack.Options{Catalog: cat})
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
	return tgt
}

// runPhase sends items on sched to tgt and returns the records by ID.
func runPhase(t testing.TB, tgt *target.Target, llm traffic.LLMShape, sched load.Schedule, items []traffic.Item) []record.Request {
	t.Helper()
	var mu sync.Mutex
	var recs []record.Request
	env := &workload.Env{Target: tgt, Start: time.Now(), Log: io.Discard, Sent: func() {}, FineGap: -1,
		Record: func(r record.Request) { mu.Lock(); recs = append(recs, r); mu.Unlock() }}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	traffic.Phase{Name: "p", Schedule: sched, Items: items, Shapes: traffic.Shapes{LLM: llm}}.Run(ctx, env, 0)
	slices.SortFunc(recs, func(a, b record.Request) int { return strings.Compare(a.ID, b.ID) })
	return recs
}

func llmItems(n int, llm *traffic.LLMShape) []traffic.Item {
	items := make([]traffic.Item, n)
	for i := range items {
		items[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: "t", Priority: protocol.PriorityNormal, Text: uint64(i)*7919 + 1}
	}
	llm.Fill(items)
	return items
}

func every(n int, gap time.Duration) load.Schedule {
	s := load.Schedule{Offsets: make([]time.Duration, n)}
	for i := range s.Offsets {
		s.Offsets[i] = time.Duration(i) * gap
	}
	s.Length = time.Duration(n) * gap
	return s
}

// TestPromptTokensExactOnEmbeddedStack: against the embedded stack every
// request's usage.prompt_tokens is its intended input_tokens under the
// default tokenizer — lengths from distributions, shared prefixes and
// the turns of sessions alike — and completion_tokens its output_tokens.
func TestPromptTokensExactOnEmbeddedStack(t *testing.T) {
	tgt := embedded(t, nil)
	llm := traffic.LLMShape{Model: model, Stream: true, Shape: shape.Shape{
		InputTokens:  shape.Dist{Kind: shape.LogNormal, Median: 300, Sigma: 1, Min: 1, Max: 3000},
		OutputTokens: shape.Dist{Kind: shape.Uniform, Min: 1, Max: 12},
		Prefix:       &shape.Prefix{Groups: 3, Tokens: 200, Share: 0.5}}}
	if err := llm.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	recs := runPhase(t, tgt, llm, every(40, 15*time.Millisecond), llmItems(40, &llm))
	sess := llm
	sess.Sessions = &shape.Sessions{Turns: shape.FixedDist(3), OutputTokens: shape.FixedDist(6)}
	if err := sess.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	recs = append(recs, runPhase(t, tgt, sess, every(4, 20*time.Millisecond), llmItems(4, &sess))...)
	prefixed, turns := 0, 0
	for _, r := range recs {
		if !r.OK || r.InputTokens == 0 || r.PromptTok != r.InputTokens || r.OutputTok != r.OutputTokens {
			t.Errorf("%s: ok %v, intended %d→%d tokens, server counted %d→%d (%s)", r.ID, r.OK, r.InputTokens, r.OutputTokens, r.PromptTok, r.OutputTok, r.Error)
		}
		if r.PrefixGroup > 0 {
			prefixed++
		}
		turns = max(turns, r.Turn)
	}
	if len(recs) != 40+4*3 || prefixed == 0 || turns != 3 {
		t.Errorf("%d records, %d prefixed, %d turns at most; want 52, some, 3", len(recs), prefixed, turns)
	}
}

// TestSessionTTFTGrowsWithTurn: a session's turn carries the
// conversation so far, so on an engine without a prefix cache its
// prefill, and TTFT, grow with the turn index.
func TestSessionTTFTGrowsWithTurn(t *testing.T) {
	tgt := embedded(t, func(p *profile.LLM) { p.PrefixCache, p.Jitter = false, 0 })
	llm := traffic.LLMShape{Model: model, Stream: true, Shape: shape.Shape{InputTokens: shape.FixedDist(600), OutputTokens: shape.FixedDist(4),
		Sessions: &shape.Sessions{Turns: shape.FixedDist(4), ThinkTime: shape.FixedDist(5)}}}
	if err := llm.Validate("test.llm"); err != nil {
		t.Fatal(err)
	}
	recs := runPhase(t, tgt, llm, every(3, 800*time.Millisecond), llmItems(3, &llm)) // sessions one after the other
	stats := traffic.TurnStats(recs)
	if len(stats) != 4 {
		t.Fatalf("turn stats %+v", stats)
	}
	for k := 1; k < len(stats); k++ {
		if stats[k].TTFT.P50 <= stats[k-1].TTFT.P50 || stats[k].Input <= stats[k-1].Input {
			t.Errorf("turn %d: TTFT p50 %.1f ms after %.1f ms, input %.0f after %.0f; want both growing", k+1, stats[k].TTFT.P50, stats[k-1].TTFT.P50, stats[k].Input, stats[k-1].Input)
		}
	}
	if tbl, ok := traffic.TurnTable(recs); ok {
		t.Logf("%+v", tbl.Rows)
	}
}

// TestMooncakeTraceHitRate: a Mooncake trace whose requests repeat
// hash_ids replays with their blocks as shared text, and the simulator's
// prefix-cache hit rate on /metrics is the one the trace implies (every
// leading block seen before is a hit) within 5 points.
func TestMooncakeTraceHitRate(t *testing.T) {
	tgt := embedded(t, func(p *profile.LLM) { p.Jitter = 0 })
	dir := t.TempDir()
	path := filepath.Join(dir, "mooncake.jsonl")
	var b strings.Builder
	seen := map[int64]bool{}
	hit, total := 0, 0
	for i := range 24 {
		// A shared system block, a shared document after it, a fresh
		// block: like Mooncake's, an id stands for its whole prefix.
		ids := []int64{int64(i % 3), int64(100 + 10*(i%3) + i%2), int64(1000 + i)}
		in := 2*512 + 100 + (i%4)*97
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 4, "hash_ids": [%d, %d, %d]}`+"\n", i*120, in, ids[0], ids[1], ids[2])
		for k, id := range ids { // leading blocks seen before are cached
			if !seen[id] {
				break
			}
			hit += min(512, in-k*512)
		}
		for _, id := range ids {
			seen[id] = true
		}
		total += in
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	sched, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessTrace, TraceFile: path, TraceFormat: "mooncake", Count: 24}, 1)
	if err != nil {
		t.Fatal(err)
	}
	llm := traffic.LLMShape{Model: model, Stream: true, Shape: shape.Of(1, 1)}
	items := llmItems(sched.Len(), &llm)
	traffic.FillTrace(items, sched, 512)
	recs := runPhase(t, tgt, llm, sched, items)
	for _, r := range recs {
		if !r.OK || r.PromptTok != r.InputTokens {
			t.Fatalf("%s: ok %v, prompt %d of %d", r.ID, r.OK, r.PromptTok, r.InputTokens)
		}
	}
	implied := float64(hit) / float64(total)
	got := scrapeGauge(t, tgt.URL()+"/metrics", "sagebench_gateway_prefix_cache_hit_ratio")
	t.Logf("implied hit rate %.3f, simulator %.3f", implied, got)
	if implied < 0.2 || got < implied-0.05 || got > implied+0.05 {
		t.Errorf("simulator hit rate %.3f, trace implies %.3f (±0.05)", got, implied)
	}
}

func scrapeGauge(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("%s not on /metrics", name)
	return 0
}
