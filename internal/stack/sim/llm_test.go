package sim

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

func TestLoneRequestFollowsTimingModel(t *testing.T) {
	p := testLLM()
	r := newRig(t, p, 1)
	a := r.gen(words("a", 50), 4)
	r.drain()
	// prefill 50 tokens in one step (11 ms + 5 ms), then one 11 ms step per token
	want := []time.Duration{ms(16), ms(27), ms(38), ms(49)}
	if got := since(t0, a.times); !slices.Equal(got, want) {
		t.Fatalf("token times %v, want %v", got, want)
	}
	if got := p.IdleTTFT(50); got != want[0] {
		t.Errorf("IdleTTFT(50) = %v, engine produced the first token at %v", got, want[0])
	}
	if err := terminal(a.s); !errors.Is(err, io.EOF) {
		t.Errorf("terminal error %v, want io.EOF", err)
	}
	if l := r.e.Load(); l.Running != 0 || l.Waiting != 0 || l.KVUsed != 0 {
		t.Errorf("idle Load() = %+v, want nothing held", l)
	}
	if u := a.s.Usage(); u != (engine.Usage{PromptTokens: 50, CompletionTokens: 4}) {
		t.Errorf("Usage() = %+v", u)
	}
}

func TestChunkedPrefillOfLongPrompt(t *testing.T) {
	p := testLLM()
	r := newRig(t, p, 1)
	a := r.gen(words("a", 150), 1)
	r.drain()
	// chunks of 64, 64, 22: 17.4 + 17.4 + 13.2 ms
	if got, want := since(t0, a.times), []time.Duration{ms(48)}; !slices.Equal(got, want) {
		t.Fatalf("token times %v, want %v", got, want)
	}
	if p.IdleTTFT(150) != ms(48) {
		t.Errorf("IdleTTFT(150) = %v, want 48ms", p.IdleTTFT(150))
	}
	if want := []time.Time{t0.Add(ms(17.4)), t0.Add(ms(34.8)), t0.Add(ms(48))}; !slices.Equal(r.steps, want) {
		t.Errorf("step ends %v, want %v", since(t0, r.steps), since(t0, want))
	}
}

func TestPrefillSharesStepsWithDecode(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	a := r.gen(words("a", 10), 8)
	r.advance(ms(12)) // a's prefill step (10+1+1 ms) ends; its first decode step starts
	b := r.gen(words("b", 150), 2)
	r.drain()
	// a decodes alone until 23 ms; then two steps of a's decode + 63 prompt
	// tokens of b (10+2+6.3 ms), one with the last 24 (10+2+2.4 ms); both
	// decode (12 ms) until b is done, then a alone again (11 ms).
	wantA := []time.Duration{ms(12), ms(23), ms(41.3), ms(59.6), ms(74), ms(86), ms(97), ms(108)}
	if got := since(t0, a.times); !slices.Equal(got, wantA) {
		t.Errorf("a token times %v, want %v", got, wantA)
	}
	if got, want := since(t0, b.times), []time.Duration{ms(74), ms(86)}; !slices.Equal(got, want) {
		t.Errorf("b token times %v, want %v", got, want)
	}
}

func TestSlotsBoundTheRunningBatch(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	var recs []*rec
	r.e.Pause() // let all five arrive before the first step
	for i := range 5 {
		recs = append(recs, r.gen(words(string(rune('a'+i)), 10), 3))
	}
	if l := r.e.Load(); l.Running != 0 || l.Waiting != 5 {
		t.Fatalf("paused Load() = %+v, want 5 waiting", l)
	}
	r.e.Resume()
	r.sync()
	if l := r.e.Load(); l.Running != 4 || l.Waiting != 1 || l.Slots != 4 {
		t.Fatalf("Load() = %+v, want 4 running (max_num_seqs) and 1 waiting", l)
	}
	r.drain()
	// four prefill together (10+4+4 ms), decode at 14 ms a step; the fifth is admitted when they finish.
	for i, rc := range recs[:4] {
		if got, want := since(t0, rc.times), []time.Duration{ms(18), ms(32), ms(46)}; !slices.Equal(got, want) {
			t.Errorf("request %d times %v, want %v", i, got, want)
		}
	}
	if got, want := since(t0, recs[4].times), []time.Duration{ms(58), ms(69), ms(80)}; !slices.Equal(got, want) {
		t.Errorf("fifth request times %v, want %v", got, want)
	}
}

func TestKVBudgetGatesAdmissionAndCloseFreesIt(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	// 10 + 500 tokens = 32 pages of 16 = 512 KV tokens: two fill the 1024 budget.
	a := r.gen(words("a", 10), 500)
	r.gen(words("b", 10), 500)
	c := r.gen(words("c", 10), 500)
	r.advance(ms(50))
	if l := r.e.Load(); l.Running != 2 || l.Waiting != 1 || l.KVUsed != 1024 || l.KVCapacity != 1024 {
		t.Fatalf("Load() = %+v, want 2 running, 1 waiting on KV, 1024/1024 KV", l)
	}
	if produced(c.s) != 0 {
		t.Fatal("c produced tokens without KV")
	}
	a.s.Close() // the client went away: a's slot and KV are free at once
	r.sync()
	if l := r.e.Load(); l.Running != 1 || l.KVUsed != 512 {
		t.Fatalf("after Close, Load() = %+v, want 1 running and 512 KV", l)
	}
	r.advance(ms(50))
	if l := r.e.Load(); l.Running != 2 || l.Waiting != 0 {
		t.Fatalf("Load() = %+v, want c admitted", l)
	}
	if produced(c.s) == 0 {
		t.Error("c admitted but produced nothing")
	}
	if _, err := a.s.Recv(context.Background()); !errors.Is(err, errStreamClosed) {
		t.Errorf("Recv after Close = %v, want errStreamClosed", err)
	}
	if st := r.e.Stats(); st.Cancelled != 1 || st.Admitted != 3 {
		t.Errorf("Stats() = %+v", st)
	}
}

func TestOverload(t *testing.T) {
	p := testLLM()
	r := newRig(t, p, 1)
	_, err := r.e.Generate(context.Background(), engine.ChatRequest{Prompt: "x", MaxTokens: 2000})
	var te *engine.TooLargeError
	if !errors.As(err, &te) || !errors.Is(err, engine.ErrTooLarge) || errors.Is(err, engine.ErrOverloaded) ||
		te.Capacity != p.KVCacheTokens || !strings.Contains(err.Error(), "KV") {
		t.Errorf("request larger than the KV budget: %v, want a TooLargeError naming KV (not ErrOverloaded: no engine can ever take it)", err)
	}
	r.e.Pause() // nothing is admitted while paused, so the queue fills
	for i := range p.MaxWaiting {
		r.gen(words(string(rune('a'+i)), 4), 2)
	}
	if _, err := r.e.Generate(context.Background(), engine.ChatRequest{Prompt: "x", MaxTokens: 2}); !errors.Is(err, engine.ErrOverloaded) {
		t.Errorf("Generate beyond max_waiting = %v, want ErrOverloaded", err)
	}
	if l := r.e.Load(); l.Waiting != p.MaxWaiting {
		t.Errorf("Load().Waiting = %d, want %d", l.Waiting, p.MaxWaiting)
	}
	r.recs[0].s.Close() // leaving the queue frees a place
	r.sync()
	if l := r.e.Load(); l.Waiting != p.MaxWaiting-1 {
		t.Errorf("after closing a waiting stream Load().Waiting = %d", l.Waiting)
	}
	if st := r.e.Stats(); st.Rejected != 2 {
		t.Errorf("Stats().Rejected = %d, want 2", st.Rejected)
	}
}

func TestPrefixCache(t *testing.T) {
	p := testLLM()
	p.PrefixCache = true
	shared := words("s", 32) // two full pages
	tests := []struct {
		name       string
		prompt     string
		wantCached int
		wantTTFT   time.Duration
	}{
		{"cold", shared + words("x", 8), 0, ms(11 + 4)},
		{"same prompt", shared + words("x", 8), 32, ms(11 + 0.8)},
		{"shares first page only", words("s", 16) + words("y", 24), 16, ms(11 + 2.4)},
		{"whole prompt cached keeps one token to compute", shared, 31, ms(11 + 0.1)},
		{"different prefix", words("z", 40), 0, ms(11 + 4)},
	}
	r := newRig(t, p, 1)
	for _, tt := range tests {
		start := r.clk.Now()
		rc := r.gen(tt.prompt, 1)
		r.drain()
		if got := rc.s.Usage().CachedTokens; got != tt.wantCached {
			t.Errorf("%s: cached %d tokens, want %d", tt.name, got, tt.wantCached)
		}
		if got := rc.times[0].Sub(start); got != tt.wantTTFT {
			t.Errorf("%s: TTFT %v, want %v", tt.name, got, tt.wantTTFT)
		}
	}
}

func TestPrefixCacheOff(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	for range 2 {
		rc := r.gen(words("s", 40), 1)
		r.drain()
		if c := rc.s.Usage().CachedTokens; c != 0 {
			t.Fatalf("prefix cache off but %d tokens cached", c)
		}
	}
}

func TestCloseFailsInFlight(t *testing.T) {
	p := testLLM()
	p.MaxNumSeqs = 1
	r := newRig(t, p, 1)
	running := r.gen(words("a", 10), 100)
	waiting := r.gen(words("b", 10), 100)
	r.advance(ms(30))
	n := produced(running.s)
	r.e.Close()
	r.e.Close() // idempotent
	ctx := context.Background()
	for i := range n { // tokens already produced are still delivered
		if tok, err := running.s.Recv(ctx); err != nil || tok.Index != i {
			t.Fatalf("Recv %d = %v, %v", i, tok, err)
		}
	}
	if _, err := running.s.Recv(ctx); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("running stream: %v, want ErrClosed", err)
	}
	if _, err := waiting.s.Recv(ctx); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("waiting stream: %v, want ErrClosed", err)
	}
	if _, err := r.e.Generate(ctx, engine.ChatRequest{Prompt: "x"}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Generate after Close: %v, want ErrClosed", err)
	}
	running.s.Close() // safe after the engine is gone
	r.e.SetSlowdown(2)
	r.e.Pause()
	r.e.Resume()
}

func TestPauseAndResume(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	a := r.gen(words("a", 10), 4)
	r.advance(ms(12)) // first token
	r.e.Pause()
	r.advance(ms(100))
	if n := produced(a.s); n != 1 {
		t.Fatalf("produced %d tokens while paused, want 1", n)
	}
	r.e.Resume() // the step due at 23 ms completes now (112 ms)
	r.sync()
	r.drain()
	if got, want := since(t0, a.times), []time.Duration{ms(12), ms(112), ms(123), ms(134)}; !slices.Equal(got, want) {
		t.Errorf("token times %v, want %v", got, want)
	}
}

func TestPauseIdleEngineHoldsNewWork(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	r.e.Pause()
	a := r.gen(words("a", 10), 1)
	r.advance(time.Second)
	if produced(a.s) != 0 {
		t.Fatal("paused engine produced a token")
	}
	r.e.Resume()
	r.sync()
	r.drain()
	if got, want := since(t0, a.times), []time.Duration{time.Second + ms(12)}; !slices.Equal(got, want) {
		t.Errorf("token times %v, want %v", got, want)
	}
}

func TestSlowdown(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	r.e.SetSlowdown(2)
	a := r.gen(words("a", 10), 3)
	r.drain()
	if got, want := gaps(a.times), []time.Duration{ms(22), ms(22)}; !slices.Equal(got, want) {
		t.Errorf("ITL under slowdown 2: %v, want %v", got, want)
	}
	r.e.SetSlowdown(0) // means 1
	b := r.gen(words("b", 10), 3)
	r.drain()
	if got, want := gaps(b.times), []time.Duration{ms(11), ms(11)}; !slices.Equal(got, want) {
		t.Errorf("ITL after reset: %v, want %v", got, want)
	}
}

func TestJitterIsSeededAndBounded(t *testing.T) {
	p := testLLM()
	p.Jitter = 0.1
	run := func(seed int64) ([]time.Duration, string) {
		r := newRig(t, p, seed)
		a := r.gen("same prompt for both", 20)
		r.drain()
		var text strings.Builder
		for {
			tok, err := a.s.Recv(context.Background())
			if err != nil {
				break
			}
			text.WriteString(tok.Text)
		}
		return gaps(a.times), text.String()
	}
	g1, text1 := run(7)
	g2, text2 := run(7)
	g3, text3 := run(8)
	if !slices.Equal(g1, g2) || text1 != text2 {
		t.Error("same seed gave different timings or text")
	}
	if slices.Equal(g1, g3) || text1 == text3 {
		t.Error("different seeds gave identical timings and text")
	}
	lo, hi := time.Duration(float64(ms(11))*0.9), time.Duration(float64(ms(11))*1.1)
	for _, g := range g1 {
		if g < lo || g > hi {
			t.Errorf("ITL %v outside [%v, %v]", g, lo, hi)
		}
	}
	if n := CountTokens(text1); n != 20 {
		t.Errorf("CountTokens(generated text) = %d, want 20: %q", n, text1)
	}
}

func TestSlowConsumerDoesNotStallOthers(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	r.e.Pause()
	idle := r.gen(words("a", 10), 50) // never read during the run
	busy := r.gen(words("b", 10), 50)
	r.e.Resume()
	r.drain()
	if produced(idle.s) != 50 || produced(busy.s) != 50 {
		t.Fatalf("produced %d and %d, want 50 each", produced(idle.s), produced(busy.s))
	}
	if !slices.Equal(idle.times, busy.times) {
		t.Error("an unread stream changed the other stream's timing")
	}
	var got []int
	for {
		tok, err := idle.s.Recv(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tok.Index)
	}
	if len(got) != 50 || got[49] != 49 {
		t.Errorf("late reader got %d tokens", len(got))
	}
}

func TestRecvHonoursContext(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	a := r.gen(words("a", 10), 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.s.Recv(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Recv with a cancelled context = %v", err)
	}
	if _, err := r.e.Generate(ctx, engine.ChatRequest{Prompt: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Generate with a cancelled context = %v", err)
	}
}

func TestDefaultMaxTokens(t *testing.T) {
	p := testLLM()
	r := newRig(t, p, 1)
	a := r.gen("hello", 0)
	r.drain()
	if got := a.s.Usage().CompletionTokens; got != p.DefaultMaxTokens {
		t.Errorf("completion tokens %d, want default %d", got, p.DefaultMaxTokens)
	}
	if r.e.ID() != "e0" || r.e.Model() != "test-model" || r.e.Profile().Name != "test" {
		t.Error("ID/Model/Profile do not echo the constructor")
	}
}

func TestLateLoopRestartsFromNow(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	r.gen(words("a", 10), 4)
	r.clk.Advance(ms(100)) // the step due at 12 ms is handled 88 ms late
	r.sync()
	next, ok := r.clk.Next()
	if want := t0.Add(ms(111)); !ok || !next.Equal(want) {
		t.Errorf("next step ends at %v, want %v (now + 11 ms, no catch-up burst)", next.Sub(t0), want.Sub(t0))
	}
}

// TestTryRecvHandsOverOnlyWhatIsReady: TryRecv never waits; it returns
// the tokens produced so far in order (the same texts Recv gives), then
// reports "not ready" until the next step, and the end once it is due.
func TestTryRecvHandsOverOnlyWhatIsReady(t *testing.T) {
	r := newRig(t, testLLM(), 1)
	a := r.gen(words("a", 10), 3)
	if _, ok, _ := a.s.TryRecv(); ok {
		t.Fatal("TryRecv before the first step: ok, want not ready")
	}
	r.advance(ms(12)) // prefill step: the first token
	r.advance(ms(22)) // two decode steps: the last two tokens and the end
	var got []string
	for {
		tok, ok, err := a.s.TryRecv()
		if !ok {
			t.Fatalf("TryRecv after the last step: not ready, want the end (tokens so far %q)", got)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("end %v, want io.EOF", err)
			}
			break
		}
		if tok.Index != len(got) {
			t.Errorf("token index %d, want %d", tok.Index, len(got))
		}
		got = append(got, tok.Text)
	}
	want := []string{tokenText(a.s.seed, 0), tokenText(a.s.seed, 1), tokenText(a.s.seed, 2)}
	if !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}
