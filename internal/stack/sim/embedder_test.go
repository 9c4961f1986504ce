package sim

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"

	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/profile"
)

func testEmbedder() profile.Embedder {
	return profile.Embedder{
		Name: "test-emb", Model: "emb-model", Dim: 16, MaxBatch: 4, MaxWait: 5 * time.Millisecond,
		BatchOverhead: 2 * time.Millisecond, PerToken: 100 * time.Microsecond, MaxQueue: 10,
	}
}

type embRig struct {
	t   *testing.T
	clk *FakeClock
	e   *Embedder
}

func newEmbRig(t *testing.T, p profile.Embedder) *embRig {
	clk := NewFakeClock(t0)
	e := NewEmbedder("emb0", p, Options{Clock: clk, Seed: 3})
	t.Cleanup(e.Close)
	return &embRig{t: t, clk: clk, e: e}
}

func (r *embRig) sync() {
	r.t.Helper()
	if err := r.e.do(func() {}); err != nil {
		r.t.Fatalf("sync: %v", err)
	}
}

func (r *embRig) submit(inputs ...string) *embedJob {
	r.t.Helper()
	j, _, err := r.e.submit(context.Background(), inputs)
	if err != nil {
		r.t.Fatalf("submit: %v", err)
	}
	r.sync()
	return j
}

// advanceTo moves the fake clock to t0+at, one timer at a time.
func (r *embRig) advanceTo(at time.Duration) {
	end := t0.Add(at)
	for {
		next, ok := r.clk.Next()
		if !ok || next.After(end) {
			break
		}
		r.clk.Advance(next.Sub(r.clk.Now()))
		r.sync()
	}
	r.clk.Advance(end.Sub(r.clk.Now()))
	r.sync()
}

func isDone(j *embedJob) bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// doneAt asserts that j completes exactly at t0+at.
func (r *embRig) doneAt(name string, j *embedJob, at time.Duration) {
	r.t.Helper()
	r.advanceTo(at - 1)
	if isDone(j) {
		r.t.Errorf("%s: done before %v", name, at)
	}
	r.advanceTo(at)
	if !isDone(j) {
		r.t.Errorf("%s: not done at %v", name, at)
	}
}

func TestEmbedderWaitsMaxWaitForALoneInput(t *testing.T) {
	r := newEmbRig(t, testEmbedder())
	j := r.submit("three word input")
	// the batch starts when the input has waited 5 ms; 2 ms + 3 tokens x 100 us
	r.doneAt("lone input", j, ms(7.3))
	if st := r.e.Stats(); st.Batches != 1 || st.Inputs != 1 || st.Tokens != 3 {
		t.Errorf("Stats() = %+v", st)
	}
}

func TestEmbedderStartsAFullBatchAtOnce(t *testing.T) {
	r := newEmbRig(t, testEmbedder())
	j := r.submit("a", "b", "c d", "e")
	if l := r.e.Load(); l.Running != 4 || l.Waiting != 0 || l.Slots != 4 {
		t.Errorf("Load() = %+v, want a running batch of 4", l)
	}
	r.doneAt("full batch", j, ms(2.5))
}

func TestEmbedderSplitsALargeRequest(t *testing.T) {
	r := newEmbRig(t, testEmbedder())
	j := r.submit("a", "b", "c", "d", "e", "f")
	// 4 inputs at once (2.4 ms); the other 2 wait out max_wait from arrival (5 ms) and take 2.2 ms
	r.doneAt("six inputs", j, ms(7.2))
	if st := r.e.Stats(); st.Batches != 2 {
		t.Errorf("batches %d, want 2", st.Batches)
	}
}

func TestEmbedderQueuesBehindARunningBatch(t *testing.T) {
	r := newEmbRig(t, testEmbedder())
	first := r.submit("a", "b", "c", "d")
	r.advanceTo(ms(1))
	second := r.submit("late")
	if l := r.e.Load(); l.Running != 4 || l.Waiting != 1 {
		t.Errorf("Load() = %+v, want 4 running and 1 waiting", l)
	}
	r.doneAt("first", first, ms(2.4))
	r.doneAt("second", second, ms(1+5+2.1)) // waits max_wait from its own arrival
}

func TestEmbedderOverloadCancelClose(t *testing.T) {
	p := testEmbedder()
	r := newEmbRig(t, p)
	r.e.Pause()
	held := r.submit("a", "b", "c", "d", "e", "f", "g", "h", "i") // 9 of max_queue 10
	_, _, err := r.e.Embed(context.Background(), []string{"x", "y"})
	if !errors.Is(err, engine.ErrOverloaded) {
		t.Fatalf("Embed beyond max_queue = %v, want ErrOverloaded", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { _, _, err := r.e.Embed(ctx, []string{"z"}); res <- err }()
	waitFor(t, func() bool { return r.e.Load().Waiting == 10 })
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Embed = %v", err)
	}
	waitFor(t, func() bool { return r.e.Load().Waiting == 9 })
	r.e.Close()
	<-held.done
	if !errors.Is(held.err, engine.ErrClosed) {
		t.Errorf("queued job after Close: %v, want ErrClosed", held.err)
	}
	if _, _, err := r.e.Embed(context.Background(), []string{"x"}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Embed after Close = %v", err)
	}
	if _, _, err := r.e.Embed(context.Background(), nil); !errors.Is(err, ErrNoInput) {
		t.Errorf("Embed(nil) = %v", err)
	}
}

func TestEmbedderPauseSlowdown(t *testing.T) {
	r := newEmbRig(t, testEmbedder())
	r.e.SetSlowdown(3)
	j := r.submit("a", "b", "c", "d")
	r.doneAt("slowed batch", j, ms(3*2.4))
	r.e.SetSlowdown(1)
	k := r.submit("a", "b", "c", "d") // at 7.2 ms, ends 9.6 ms
	r.e.Pause()
	r.advanceTo(ms(50))
	if isDone(k) {
		t.Fatal("batch completed while paused")
	}
	r.e.Resume()
	r.sync()
	if !isDone(k) {
		t.Error("batch due during the pause did not complete on Resume")
	}
}

// waitFor polls cond (for state changed by another goroutine) up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEmbedReturnsDeterministicVectors(t *testing.T) {
	p := testEmbedder()
	p.MaxWait = 0
	e := NewEmbedder("real", p, Options{}) // wall clock, tiny batches
	defer e.Close()
	inputs := []string{"the quick brown fox", "jumps over", "the quick brown fox"}
	vecs, usage, err := e.Embed(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	if usage.PromptTokens != 4+2+4 {
		t.Errorf("usage %+v", usage)
	}
	for i, v := range vecs {
		if !slices.Equal(v, corpus.Vector(inputs[i], p.Dim)) {
			t.Errorf("vector %d is not corpus.Vector(input)", i)
		}
	}
	if !slices.Equal(vecs[0], vecs[2]) {
		t.Error("same text, different vectors")
	}
}

func TestEmbedderConcurrentCallers(t *testing.T) {
	p := testEmbedder()
	p.BatchOverhead, p.PerToken, p.MaxWait, p.MaxQueue = 50*time.Microsecond, time.Microsecond, 200*time.Microsecond, 1000
	e := NewEmbedder("conc", p, Options{})
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := e.Embed(context.Background(), []string{"input", words("w", i%7+1)})
			if err == nil && len(v) != 2 {
				err = errors.New("wrong vector count")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if st := e.Stats(); st.Inputs != 128 || st.Batches < 32 {
		t.Errorf("Stats() = %+v, want 128 inputs in batches of at most 4", st)
	}
}
