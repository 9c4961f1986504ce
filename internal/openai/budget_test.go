package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heapPeak samples the live heap until stop is called and returns the
// highest HeapAlloc seen above the level at the start.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak - base
	}
}

// endless writes block to w until the client goes away or limit bytes
// were written (a bound for the test's own sake: 1 GiB).
func endless(w http.ResponseWriter, r *http.Request, head, block []byte, limit int64) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, _ = w.Write(head)
	for n := int64(0); n < limit && r.Context().Err() == nil; n += int64(len(block)) {
		if _, err := w.Write(block); err != nil {
			return
		}
	}
}

// TestBudgetBoundsHugeBodies: 8 requests each answered with a 1 GiB JSON
// body, under a per-response limit far above the budget, fail too_large
// once the bytes all of them hold reach MaxBytesInFlight, and the heap
// stays within a small multiple of it.
func TestBudgetBoundsHugeBodies(t *testing.T) {
	const budget = 16 << 20
	block := bytes.Repeat([]byte("0.125,"), 10<<10)
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		endless(w, r, []byte(`{"data":[{"index":0,"embedding":[`), block, 1<<30)
	}
	c, _ := newTestClient(t, http.HandlerFunc(h), Config{MaxResponseBytes: 1 << 30, MaxBytesInFlight: budget})
	stop := heapPeak()
	var wg sync.WaitGroup
	results := make([]Result, 8)
	for i := range results {
		wg.Go(func() { results[i] = c.Embed(context.Background(), EmbedRequest{Model: "e", Input: []string{"x"}}) })
	}
	wg.Wait()
	peak := stop()
	t.Logf("8 × 1 GiB bodies, budget %d MiB: heap peak +%d MiB", budget>>20, peak>>20)
	for i, res := range results {
		if res.ErrClass != ClassTooLarge || !errors.Is(res.Err, errBudget) {
			t.Errorf("request %d: class %q err %v; want too_large from the budget", i, res.ErrClass, res.Err)
		}
	}
	if peak > 4*budget+16<<20 {
		t.Errorf("heap grew by %d MiB under a %d MiB budget", peak>>20, budget>>20)
	}
	if held := c.held.Load(); held != 0 {
		t.Errorf("%d bytes still charged after every call ended", held)
	}
}

// TestEndlessStreamBounded: an SSE stream that never ends keeps a bounded
// number of token times (the rest counted), no text, and ends too_large
// at the response limit with the heap flat.
func TestEndlessStreamBounded(t *testing.T) {
	block := []byte(strings.Repeat("data: "+answerChunk+"\n\n", 512))
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		endless(w, r, nil, block, 1<<30)
	}
	c, _ := newTestClient(t, http.HandlerFunc(h), Config{MaxResponseBytes: 64 << 20})
	stop := heapPeak()
	res := c.Chat(context.Background(), ChatRequest{Model: "m", Stream: true, MaxTokens: 128})
	peak := stop()
	t.Logf("endless stream to the 64 MiB response limit: %d tokens timed, %d times kept, heap peak +%d KiB",
		res.TokenCount, len(res.Tokens), peak>>10)
	if res.ErrClass != ClassTooLarge {
		t.Fatalf("class %q (%v), want too_large", res.ErrClass, res.Err)
	}
	if max := tokenTimesCap(&ChatRequest{MaxTokens: 128}); len(res.Tokens) != max || res.TokensDropped != res.TokenCount-max {
		t.Errorf("%d times kept, %d dropped of %d; want %d kept, the rest dropped", len(res.Tokens), res.TokensDropped, res.TokenCount, max)
	}
	if res.Text != "" {
		t.Errorf("kept %d bytes of text without KeepText", len(res.Text))
	}
	if peak > 16<<20 {
		t.Errorf("heap grew by %d MiB reading one stream", peak>>20)
	}
}

// TestBudgetChargesLongLines: SSE line buffers growing past their first
// 32 KiB are charged to the budget too (the line buffer's ~4 MiB and the
// event data's 3 MiB for one 3 MiB line), and given back when the call
// ends.
func TestBudgetChargesLongLines(t *testing.T) {
	var held atomic.Int64
	line := []byte("data: " + strings.Repeat("x", 3<<20) + "\n\n")
	read := func() (*call, error) {
		cl := &call{ctx: context.Background(), body: bytes.NewReader(line), budget: &held, limit: 8 << 20}
		sr := NewSSEReader(cl.body, 8<<20)
		sr.grow = cl.charge
		_, err := sr.Next()
		return cl, err
	}
	a, err := read()
	if err != nil {
		t.Fatalf("first 3 MiB line under an 8 MiB budget: %v", err)
	}
	b, err := read()
	if !errors.Is(err, errBudget) {
		t.Errorf("second line while the first is held: err %v, want the budget error", err)
	}
	a.release()
	b.release()
	if held.Load() != 0 {
		t.Fatalf("%d bytes charged after release, want 0", held.Load())
	}
	if _, err := read(); err != nil {
		t.Errorf("after the first call ended: %v", err)
	}
}

// TestBudgetChargesEventData: many data lines of one event (no blank line
// between them) grow the event's data, which is charged like a line and
// bounded as one: 200 lines of 16 KiB under a 1 MiB budget fail.
func TestBudgetChargesEventData(t *testing.T) {
	var held atomic.Int64
	body := strings.Repeat("data: "+strings.Repeat("x", 16<<10)+"\n", 200) + "\n"
	cl := &call{ctx: context.Background(), body: strings.NewReader(body), budget: &held, limit: 1 << 20}
	sr := NewSSEReader(cl.body, 8<<20)
	sr.grow = cl.charge
	if _, err := sr.Next(); !errors.Is(err, errBudget) {
		t.Fatalf("a 3.2 MiB event under a 1 MiB budget: %v, want the budget error", err)
	}
	cl.release()
	if held.Load() != 0 {
		t.Fatalf("%d bytes charged after release", held.Load())
	}
	sr = NewSSEReader(strings.NewReader(body), 1<<20)
	if _, err := sr.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("a 3.2 MiB event with 1 MiB lines: %v, want ErrLineTooLong", err)
	}
}
