package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// fakeLLM is a scriptable engine.LLM for gateway unit tests. Each request
// emits MaxTokens tokens "t0 t1 ..."; hold (when set) blocks every stream
// before its first token until closed; failGen makes Generate fail.
type fakeLLM struct {
	id, model string
	slots     int
	delay     time.Duration // between tokens
	mu        sync.Mutex
	hold      chan struct{}
	failGen   error
	failMid   error // returned by Recv after the first token
	started   []string
	running   int
	maxSeen   int
}

var _ engine.LLM = (*fakeLLM)(nil)

func newFakeLLM(id string, slots int) *fakeLLM {
	return &fakeLLM{id: id, model: "m-llm", slots: slots}
}

func (f *fakeLLM) ID() string    { return f.id }
func (f *fakeLLM) Model() string { return f.model }

func (f *fakeLLM) Load() engine.Load {
	f.mu.Lock()
	defer f.mu.Unlock()
	return engine.Load{Running: f.running, Slots: f.slots}
}

func (f *fakeLLM) set(fn func(*fakeLLM)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeLLM) Generate(ctx context.Context, req engine.ChatRequest) (engine.Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failGen != nil {
		return nil, f.failGen
	}
	f.started = append(f.started, strings.TrimSpace(strings.TrimPrefix(req.Prompt, "user: ")))
	f.running++
	f.maxSeen = max(f.maxSeen, f.running)
	return &fakeStream{f: f, n: req.MaxTokens, prompt: len(strings.Fields(req.Prompt)), hold: f.hold, failMid: f.failMid}, nil
}

func (f *fakeLLM) order() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...)
}

type fakeStream struct {
	f       *fakeLLM
	n, i    int
	prompt  int
	hold    chan struct{}
	failMid error
	once    sync.Once
}

func (s *fakeStream) Recv(ctx context.Context) (engine.Token, error) {
	if s.i == 0 && s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return engine.Token{}, ctx.Err()
		}
	}
	if s.i >= s.n {
		return engine.Token{}, io.EOF
	}
	if s.i > 0 && s.failMid != nil {
		return engine.Token{}, s.failMid
	}
	if s.i > 0 && s.f.delay > 0 {
		select {
		case <-time.After(s.f.delay):
		case <-ctx.Done():
			return engine.Token{}, ctx.Err()
		}
	}
	tok := engine.Token{Index: s.i, Text: " t" + itoa(s.i)}
	if s.i == 0 {
		tok.Text = "t0"
	}
	s.i++
	return tok, nil
}

func (s *fakeStream) Usage() engine.Usage {
	return engine.Usage{PromptTokens: s.prompt, CompletionTokens: s.i}
}

func (s *fakeStream) Close() {
	s.once.Do(func() { s.f.set(func(f *fakeLLM) { f.running-- }) })
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// fakeEmbedder returns dim-2 vectors [len(text), index-in-call] and
// records the size of every call.
type fakeEmbedder struct {
	id, model string
	slots     int
	dim       int // > 2: pad vectors to this dimension (benchmarks)
	mu        sync.Mutex
	hold      chan struct{}
	fail      error
	calls     []int
}

var _ engine.Embedder = (*fakeEmbedder)(nil)

func (f *fakeEmbedder) ID() string    { return f.id }
func (f *fakeEmbedder) Model() string { return f.model }
func (f *fakeEmbedder) Load() engine.Load {
	return engine.Load{Slots: f.slots}
}

func (f *fakeEmbedder) Embed(ctx context.Context, inputs []string) ([][]float32, engine.Usage, error) {
	f.mu.Lock()
	hold, fail := f.hold, f.fail
	f.calls = append(f.calls, len(inputs))
	f.mu.Unlock()
	if fail != nil {
		return nil, engine.Usage{}, fail
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, engine.Usage{}, ctx.Err()
		}
		f.mu.Lock()
		fail = f.fail // a failure set while the call was held applies to it
		f.mu.Unlock()
		if fail != nil {
			return nil, engine.Usage{}, fail
		}
	}
	out := make([][]float32, len(inputs))
	for i, s := range inputs {
		out[i] = []float32{float32(len(s)), float32(i)}
		for j := 2; j < f.dim; j++ {
			out[i] = append(out[i], 0.0123456*float32(j%97)-0.3)
		}
	}
	return out, engine.Usage{PromptTokens: len(inputs)}, nil
}

func (f *fakeEmbedder) callSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.calls...)
}

var errBoom = errors.New("boom")

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
