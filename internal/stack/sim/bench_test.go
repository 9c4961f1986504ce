package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
)

// wideLLM is the H100 profile with room for n concurrent sequences.
func wideLLM(tb testing.TB, n int) profile.LLM {
	tb.Helper()
	c, err := profile.Default()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := c.LLM("llama3.1-8b-h100")
	if err != nil {
		tb.Fatal(err)
	}
	p.MaxNumSeqs, p.MaxWaiting = n, 2*n
	p.KVCacheTokens = max(p.KVCacheTokens, n*1024)
	return p
}

// streamHeap measures the heap held per in-flight stream: n requests with
// 256-token prompts, all admitted and mid-decode, on a frozen fake clock;
// with readers, each stream also has a goroutine blocked in Recv (as a
// gateway handler would).
func streamHeap(tb testing.TB, n int, readers bool) (perStream float64) {
	p := wideLLM(tb, n)
	p.PrefillChunk = n * 300
	clk := NewFakeClock(t0)
	e := NewLLM("mem", p, Options{Seed: 1, Clock: clk})
	defer e.Close()
	prompts := make([]string, n)
	for i := range prompts {
		prompts[i] = words("p", 255) + string(rune('a'+i%26))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	before := heapInUse()
	streams := make([]engine.Stream, n)
	for i := range streams {
		s, err := e.Generate(ctx, engine.ChatRequest{Prompt: prompts[i], MaxTokens: 512})
		if err != nil {
			tb.Fatal(err)
		}
		streams[i] = s
		if readers {
			wg.Add(1)
			go func() { // reads what is produced, then blocks in Recv
				defer wg.Done()
				for {
					if _, err := s.Recv(ctx); err != nil {
						return
					}
				}
			}()
		}
	}
	_ = e.do(func() {})
	for range 2 { // prefill step, then the first decode step is in flight
		next, _ := clk.Next()
		clk.Advance(next.Sub(clk.Now()))
		_ = e.do(func() {})
	}
	if l := e.Load(); l.Running != n {
		tb.Fatalf("running %d, want %d", l.Running, n)
	}
	if readers {
		time.Sleep(50 * time.Millisecond) // let every reader drain its token and block
	}
	after := heapInUse()
	runtime.KeepAlive(streams)
	cancel()
	wg.Wait()
	runtime.KeepAlive(prompts)
	return float64(after-before) / float64(n)
}

// heapInUse is the live heap plus goroutine stacks, after a full GC.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}

// TestStreamMemoryBound checks the design budget: at most 64 KiB per
// in-flight stream, including a goroutine blocked in Recv.
func TestStreamMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 2000 streams")
	}
	per := streamHeap(t, 2000, true)
	t.Logf("%.0f bytes per in-flight stream (engine state + a reader goroutine)", per)
	if per > 64<<10 {
		t.Errorf("%.0f bytes per stream, budget 64 KiB", per)
	}
}

func BenchmarkStreamMemory(b *testing.B) {
	for _, readers := range []bool{false, true} {
		name := "engine-only"
		if readers {
			name = "with-reader-goroutine"
		}
		b.Run(name, func(b *testing.B) {
			var per float64
			for b.Loop() {
				per = streamHeap(b, 2000, readers)
			}
			b.ReportMetric(per, "B/stream")
		})
	}
}

// BenchmarkThroughput runs 1000 concurrent streams of 64 tokens each on the
// wall clock through one engine, once with the H100 timing (the engine
// should keep model time) and once with 20 us steps (the loop itself is
// the bottleneck): it reports delivered tokens/s and model/measured, the
// engine's modelled busy time (sum of its step durations) over the wall
// time: 1 means the event loop kept model time.
func BenchmarkThroughput(b *testing.B) {
	const streams, tokens = 1000, 64
	for _, tc := range []struct {
		name string
		step time.Duration
	}{{"h100-timing", 0}, {"loop-bound-20us-steps", 20 * time.Microsecond}} {
		b.Run(tc.name, func(b *testing.B) {
			p := wideLLM(b, streams)
			p.Jitter = 0
			if tc.step > 0 {
				p.StepBase, p.StepPerSeq, p.PrefillPerToken = tc.step, 0, 0
			}
			var elapsed, busy time.Duration
			var late int64
			for b.Loop() {
				elapsed, busy, late = runStreams(b, p, streams, tokens)
			}
			b.ReportMetric(float64(late), "late-steps")
			b.ReportMetric(float64(streams*tokens)/elapsed.Seconds(), "tokens/s")
			b.ReportMetric(float64(busy)/float64(elapsed), "model/measured")
		})
	}
}

func runStreams(b *testing.B, p profile.LLM, n, tokens int) (elapsed, busy time.Duration, late int64) {
	e := NewLLM("tp", p, Options{Seed: 1})
	defer e.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	var first sync.Once
	var start time.Time
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first.Do(func() { start = time.Now() })
			s, err := e.Generate(ctx, engine.ChatRequest{Prompt: words("w", 16) + string(rune('a'+i%26)), MaxTokens: tokens})
			if err != nil {
				b.Error(err)
				return
			}
			defer s.Close()
			for {
				if _, err := s.Recv(ctx); err != nil {
					if !errors.Is(err, io.EOF) {
						b.Error(err)
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	st := e.Stats()
	return time.Since(start), st.Busy, st.Late
}

// BenchmarkFidelity measures TTFT and ITL of lone requests on the wall
// clock against the profile's model (IdleTTFT, IdleITL) and reports the
// medians and their relative error in percent. One iteration is one
// request with a 1000-token prompt and 32 output tokens.
func BenchmarkFidelity(b *testing.B) {
	c, err := profile.Default()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"llama3.1-8b-h100", "llama3.1-8b-a10g"} {
		b.Run(name, func(b *testing.B) {
			p, _ := c.LLM(name)
			e := NewLLM("fid", p, Options{Seed: 1})
			defer e.Close()
			var ttfts, itls []time.Duration
			i := 0
			for b.Loop() {
				// distinct prompts: a shared prefix would hit the prefix cache
				t, it := timeOne(b, e, words(fmt.Sprintf("f%d_", i), 1000), 32)
				ttfts, itls = append(ttfts, t), append(itls, it...)
				i++
			}
			report(b, "ttft", median(ttfts), p.IdleTTFT(1000))
			report(b, "itl", median(itls), p.IdleITL())
			b.ReportMetric(float64(hostTimerLag(20, p.IdleITL()))/1e6, "host-timer-lag-ms")
		})
	}
}

func timeOne(b *testing.B, e *LLM, prompt string, tokens int) (time.Duration, []time.Duration) {
	ctx := context.Background()
	start := time.Now()
	s, err := e.Generate(ctx, engine.ChatRequest{Prompt: prompt, MaxTokens: tokens})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ttft time.Duration
	var itls []time.Duration
	last := start
	for {
		_, err := s.Recv(ctx)
		now := time.Now()
		if errors.Is(err, io.EOF) {
			return ttft, itls
		}
		if err != nil {
			b.Fatal(err)
		}
		if ttft == 0 {
			ttft = now.Sub(start)
		} else {
			itls = append(itls, now.Sub(last))
		}
		last = now
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(b *testing.B, name string, measured, model time.Duration) {
	b.ReportMetric(float64(measured)/1e6, name+"-ms")
	b.ReportMetric(float64(model)/1e6, name+"-model-ms")
	b.ReportMetric(100*(float64(measured)-float64(model))/float64(model), name+"-err-%")
}

// BenchmarkEmbedderBatching sends bursts of 64 concurrent one-input calls
// (10 tokens each) to the CPU embedder profile on the wall clock and
// reports the mean batch size and the median call latency against the
// model: two full batches of 32 back to back.
func BenchmarkEmbedderBatching(b *testing.B) {
	c, err := profile.Default()
	if err != nil {
		b.Fatal(err)
	}
	p, _ := c.Embedder("bge-small-cpu")
	p.Jitter = 0
	e := NewEmbedder("emb", p, Options{Seed: 1})
	defer e.Close()
	input := words("e", 10)
	var lat []time.Duration
	var mu sync.Mutex
	for b.Loop() {
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				if _, _, err := e.Embed(context.Background(), []string{input}); err != nil {
					b.Error(err)
				}
				mu.Lock()
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	st := e.Stats()
	b.ReportMetric(float64(st.Inputs)/float64(st.Batches), "inputs/batch")
	b.ReportMetric(float64(median(lat))/1e6, "latency-p50-ms")
	b.ReportMetric(float64(p.BatchTime(320))/1e6, "batch-model-ms")
}

// BenchmarkEmbedderLone measures lone one-input calls (10 tokens) to the
// CPU embedder on the wall clock against the model: the input waits
// max_wait for company, then its batch takes BatchTime(10).
func BenchmarkEmbedderLone(b *testing.B) {
	c, err := profile.Default()
	if err != nil {
		b.Fatal(err)
	}
	p, _ := c.Embedder("bge-small-cpu")
	e := NewEmbedder("emb", p, Options{Seed: 1})
	defer e.Close()
	input := words("e", 10)
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, _, err := e.Embed(context.Background(), []string{input}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	report(b, "latency", median(lat), p.MaxWait+p.BatchTime(10))
	b.ReportMetric(float64(hostTimerLag(20, p.BatchTime(10)))/1e6, "host-timer-lag-ms")
}

// hostTimerLag is the median overshoot of a timer of d on this host right
// now: the floor under any wall-clock fidelity figure.
func hostTimerLag(n int, d time.Duration) time.Duration {
	lags := make([]time.Duration, n)
	for i := range lags {
		start := time.Now()
		<-time.After(d)
		lags[i] = time.Since(start) - d
	}
	return median(lags)
}
