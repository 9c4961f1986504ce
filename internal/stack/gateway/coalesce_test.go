package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

// burstLLM hands out one scripted burstStream per request; plain hides
// TryRecv (a stream that can only block, like a remote one).
type burstLLM struct {
	plain   bool
	streams chan *burstStream
}

func (b *burstLLM) ID() string        { return "burst" }
func (b *burstLLM) Model() string     { return "m-llm" }
func (b *burstLLM) Load() engine.Load { return engine.Load{Slots: 4} }

func (b *burstLLM) Generate(context.Context, engine.ChatRequest) (engine.Stream, error) {
	s := &burstStream{notify: make(chan struct{}, 1)}
	b.streams <- s
	if b.plain {
		return struct{ engine.Stream }{s}, nil
	}
	return s, nil
}

// burstStream is a stream the test feeds: emit makes several tokens (and
// maybe the end) available at one instant.
type burstStream struct {
	mu     sync.Mutex
	ready  []string
	end    error
	n      int
	notify chan struct{}
}

func (s *burstStream) emit(texts []string, end error) {
	s.mu.Lock()
	s.ready = append(s.ready, texts...)
	s.end = end
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *burstStream) TryRecv() (engine.Token, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ready) > 0 {
		t := engine.Token{Index: s.n, Text: s.ready[0]}
		s.ready, s.n = s.ready[1:], s.n+1
		return t, true, nil
	}
	return engine.Token{}, s.end != nil, s.end
}

func (s *burstStream) Recv(ctx context.Context) (engine.Token, error) {
	for {
		if t, ok, err := s.TryRecv(); ok {
			return t, err
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return engine.Token{}, ctx.Err()
		}
	}
}

func (s *burstStream) Usage() engine.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return engine.Usage{PromptTokens: 2, CompletionTokens: s.n}
}

func (s *burstStream) Close() {}

// flushRecorder is a ResponseWriter that keeps what each Flush sent.
type flushRecorder struct {
	mu      sync.Mutex
	header  http.Header
	pending bytes.Buffer
	flushes []string
	flushed chan struct{}
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{header: http.Header{}, flushed: make(chan struct{}, 1024)}
}

func (r *flushRecorder) Header() http.Header { return r.header }
func (r *flushRecorder) WriteHeader(int)     {}

func (r *flushRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending.Write(b)
}

func (r *flushRecorder) Flush() {
	r.mu.Lock()
	r.flushes = append(r.flushes, r.pending.String())
	r.pending.Reset()
	r.mu.Unlock()
	r.flushed <- struct{}{}
}

// burst is what the engine makes available at one instant.
type burst struct {
	tokens []string
	end    error
}

// TestStreamFlushesPerInstant: the gateway flushes once per instant at
// which the engine made tokens available: a burst of tokens due together
// leaves in one write and one flush, tokens spaced apart each leave on
// their own (never held back for a later one), and a stream that can only
// block flushes every token.
func TestStreamFlushesPerInstant(t *testing.T) {
	toks := func(s ...string) []string { return s }
	for _, tc := range []struct {
		name   string
		plain  bool
		bursts []burst
		want   []int // tokens in each flush
		errEv  bool  // the last flush carries an error event
	}{
		{"bursts", false, []burst{{toks("a", "b", "c"), nil}, {toks("d"), nil}, {toks("e", "f", "g", "h"), io.EOF}}, []int{3, 1, 4}, false},
		{"spaced", false, []burst{{toks("a"), nil}, {toks("b"), nil}, {toks("c"), nil}, {nil, io.EOF}}, []int{1, 1, 1, 0}, false},
		{"end after the last burst", false, []burst{{toks("a", "b"), nil}, {nil, io.EOF}}, []int{2, 0}, false},
		{"failure with a burst", false, []burst{{toks("a", "b"), nil}, {toks("c", "d"), errBoom}}, []int{2, 2}, true},
		{"stream without TryRecv", true, []burst{{toks("a", "b", "c"), io.EOF}}, []int{1, 1, 1, 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := &burstLLM{plain: tc.plain, streams: make(chan *burstStream, 1)}
			g, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = g.Close() })
			if err := g.Add("burst", Member{LLM: llm}); err != nil {
				t.Fatal(err)
			}
			rec := newFlushRecorder()
			req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody("p", 100, true)))
			done := make(chan struct{})
			go func() { defer close(done); g.Handler().ServeHTTP(rec, req) }()
			st := <-llm.streams
			for _, b := range tc.bursts {
				st.emit(b.tokens, b.end)
				if !tc.plain { // one flush per instant: wait for it before the next
					waitFlush(t, rec)
				}
			}
			<-done
			checkFlushes(t, rec, tc.want, tc.errEv)
			if got := counterValue(t, g, "sagebench_gateway_stream_writes_total"); int(got) != len(tc.want) {
				t.Errorf("sagebench_gateway_stream_writes_total %v, want %d", got, len(tc.want))
			}
		})
	}
}

func waitFlush(t *testing.T, rec *flushRecorder) {
	t.Helper()
	select {
	case <-rec.flushed:
	case <-time.After(10 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("no flush after the engine emitted")
	}
}

func checkFlushes(t *testing.T, rec *flushRecorder, want []int, errEv bool) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.pending.Len() > 0 {
		t.Errorf("written but never flushed: %q", rec.pending.String())
	}
	var got []int
	for _, f := range rec.flushes {
		got = append(got, strings.Count(f, `"content":`))
	}
	if len(got) != len(want) {
		t.Fatalf("flushes carried %v tokens, want %v:\n%q", got, want, rec.flushes)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("flushes carried %v tokens, want %v:\n%q", got, want, rec.flushes)
		}
	}
	last := rec.flushes[len(rec.flushes)-1]
	if errEv {
		if !strings.Contains(last, "event: error") || strings.Contains(last, "[DONE]") {
			t.Errorf("last flush %q: want an error event and no [DONE]", last)
		}
		return
	}
	if !strings.HasSuffix(last, "data: [DONE]\n\n") {
		t.Errorf("last flush %q: want it to end with [DONE]", last)
	}
	st, ok := protocol.ParseServerTiming(rec.header.Get(protocol.HeaderServerTiming))
	if !ok || st.FirstToken <= 0 || st.FirstToken > st.End {
		t.Errorf("server timing trailer %q (%+v)", rec.header.Get(protocol.HeaderServerTiming), st)
	}
}

// counterValue reads an unlabelled counter from the gateway's registry.
func counterValue(t *testing.T, g *Gateway, name string) float64 {
	t.Helper()
	mfs, err := g.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("counter %s not registered", name)
	return 0
}
