package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testLLM is a small exact profile: no jitter, round numbers.
func testLLM() profile.LLM {
	return profile.LLM{
		Name: "test", Model: "test-model",
		MaxNumSeqs: 4, KVCacheTokens: 1024, KVBlockTokens: 16, MaxWaiting: 8,
		PrefillPerToken: 100 * time.Microsecond, PrefillChunk: 64,
		StepBase: 10 * time.Millisecond, StepPerSeq: time.Millisecond,
		DefaultMaxTokens: 8,
	}
}

// rig drives an engine on a FakeClock and records when each token of each
// stream was produced.
type rig struct {
	t     *testing.T
	clk   *FakeClock
	e     *LLM
	recs  []*rec
	steps []time.Time
}

type rec struct {
	s     *stream
	times []time.Time // production time of each token
}

func newRig(t *testing.T, p profile.LLM, seed int64) *rig {
	t.Helper()
	clk := NewFakeClock(t0)
	e := NewLLM("e0", p, Options{Seed: seed, Clock: clk})
	t.Cleanup(e.Close)
	return &rig{t: t, clk: clk, e: e}
}

// sync waits until the loop has handled everything due so far.
func (r *rig) sync() {
	r.t.Helper()
	if err := r.e.do(func() {}); err != nil {
		r.t.Fatalf("sync: %v", err)
	}
	for _, rc := range r.recs {
		for n := produced(rc.s); len(rc.times) < n; {
			rc.times = append(rc.times, r.clk.Now())
		}
	}
}

// gen submits a request and starts recording its tokens.
func (r *rig) gen(prompt string, maxTokens int) *rec {
	r.t.Helper()
	s, err := r.e.Generate(context.Background(), engine.ChatRequest{Prompt: prompt, MaxTokens: maxTokens})
	if err != nil {
		r.t.Fatalf("Generate: %v", err)
	}
	rc := &rec{s: s.(*stream)}
	r.recs = append(r.recs, rc)
	r.sync()
	return rc
}

// advance moves time forward by d, one timer deadline at a time.
func (r *rig) advance(d time.Duration) {
	r.t.Helper()
	end := r.clk.Now().Add(d)
	for {
		next, ok := r.clk.Next()
		if !ok || next.After(end) {
			break
		}
		r.clk.Advance(next.Sub(r.clk.Now()))
		r.steps = append(r.steps, next)
		r.sync()
	}
	r.clk.Advance(end.Sub(r.clk.Now()))
	r.sync()
}

// drain runs the engine until it has no timer armed.
func (r *rig) drain() {
	r.t.Helper()
	for i := 0; ; i++ {
		next, ok := r.clk.Next()
		if !ok {
			return
		}
		if i > 100000 {
			r.t.Fatal("engine never went idle")
		}
		r.advance(next.Sub(r.clk.Now()))
	}
}

func produced(s *stream) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.produced
}

func terminal(s *stream) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// words returns a prompt of n distinct simulated tokens tagged by tag.
func words(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", tag, i)
	}
	return b.String()
}

// since returns the durations of times relative to start.
func since(start time.Time, times []time.Time) []time.Duration {
	out := make([]time.Duration, len(times))
	for i, tm := range times {
		out[i] = tm.Sub(start)
	}
	return out
}

func gaps(times []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(times); i++ {
		out = append(out, times[i].Sub(times[i-1]))
	}
	return out
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
