package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWarmOpensConnections(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"data":[{"id":"m"}]}`)
	}), Config{})
	if got := c.Warm(context.Background(), 4); got != 4 {
		t.Fatalf("Warm(4) = %d successful requests, want 4", got)
	}
	if d := c.ConnStats().Dials; d != 4 {
		t.Errorf("dials = %d, want 4 (one connection per warm-up request)", d)
	}
}

// TestRecycledCallsKeepRequestsApart: calls are recycled (their body
// reader, response buffer and trace hooks); concurrent requests must
// still each send their own body and read their own answer.
func TestRecycledCallsKeepRequestsApart(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Input) != 1 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		pad := len(req.Input[0]) % 7 // answers of different lengths
		fmt.Fprintf(w, `{"data":[{"index":0,"embedding":[%s%s]}],"usage":{"prompt_tokens":%d}}`,
			req.Input[0], strings.Repeat(",0", pad), len(req.Input[0]))
	}), Config{})
	const workers, each = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				n := w*100_000 + i*37
				in := strconv.Itoa(n)
				res := c.Embed(context.Background(), EmbedRequest{Model: "m", Input: []string{in}})
				switch {
				case res.Err != nil:
					errs <- res.Err
				case len(res.Embeddings) != 1 || res.Embeddings[0][0] != float32(n) || res.PromptTokens != len(in):
					errs <- fmt.Errorf("request %d got embedding %v, prompt_tokens %d", n, res.Embeddings, res.PromptTokens)
				case res.Sent.Before(res.Start) || res.FirstByte.Before(res.Sent) || res.End.Before(res.FirstByte):
					errs <- fmt.Errorf("request %d: times out of order: start %v sent %v first byte %v end %v", n, res.Start, res.Sent, res.FirstByte, res.End)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCallSettled(t *testing.T) {
	cases := []struct {
		name          string
		conns, writes int
		want          bool
	}{
		{"no connection", 0, 0, false},
		{"written on one connection", 1, 1, true},
		{"write not ended yet", 1, 0, false},
		{"replayed on a second connection", 2, 1, false},
		{"replayed, both written", 2, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s stamps
			s.conns, s.writes = tc.conns, tc.writes
			if got := s.settled(); got != tc.want {
				t.Errorf("settled() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUnsettledCallIsNotRecycled(t *testing.T) {
	var p calls
	cl := p.get()
	cl.st.conns = 1 // the write has not ended: the transport may read the body still
	p.put(cl)
	if got := p.get(); got == cl {
		t.Fatal("a call whose write had not ended was recycled")
	}
}

// embedBodyMarshal is the embeddings body as json.Marshal writes it.
func embedBodyMarshal(t testing.TB, model string, input []string) []byte {
	b, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{model, input})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEmbedBody(t *testing.T) {
	cases := []struct {
		name  string
		model string
		input []string
	}{
		{"plain", "bench-embed", []string{"the quick brown fox"}},
		{"several", "m", []string{"a", "", "b c"}},
		{"no inputs", "m", []string{}},
		{"nil inputs", "m", nil},
		{"html and quotes", `<m&"x">`, []string{`a\b"c<d>&e`}},
		{"control characters", "m\t", []string{"\x00\x01\n\r\b\f\x1f\x7f"}},
		{"invalid UTF-8", "m\xff", []string{"a\xc3", "\xed\xa0\x80"}},
		{"line separators", "m", []string{"a\u2028b\u2029c"}},
		{"multi-byte", "模型", []string{"héllo wörld 🙂"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := &embedExchange{req: EmbedRequest{Model: tc.model, Input: tc.input}}
			got, err := x.appendBody([]byte("keep"))
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]byte("keep"), embedBodyMarshal(t, tc.model, tc.input)...); string(got) != string(want) {
				t.Errorf("appendBody = %s\nwant         %s", got, want)
			}
		})
	}
}

func FuzzEmbedBody(f *testing.F) {
	f.Add("bench-embed", "the quick brown fox", "")
	f.Add("<m>", "a\u2028\xff&", "\x00")
	f.Fuzz(func(t *testing.T, model, a, b string) {
		x := &embedExchange{req: EmbedRequest{Model: model, Input: []string{a, b}}}
		got, err := x.appendBody(nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := embedBodyMarshal(t, model, []string{a, b}); string(got) != string(want) {
			t.Errorf("appendBody = %q, json.Marshal = %q", got, want)
		}
	})
}

// TestCallerTraceNotRecycled: a caller's own httptrace is composed into
// the call's hooks; the call must not carry it into later requests.
func TestCallerTraceNotRecycled(t *testing.T) {
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":[1]}]}`)
	}), Config{})
	var seen atomic.Int64
	traced := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotFirstResponseByte: func() { seen.Add(1) }})
	for i, ctx := range []context.Context{traced, context.Background(), traced, context.Background(), context.Background()} {
		if res := c.Embed(ctx, EmbedRequest{Model: "m", Input: []string{"x"}}); res.Err != nil || res.FirstByte.IsZero() {
			t.Fatalf("request %d: %v (first byte %v)", i, res.Err, res.FirstByte)
		}
	}
	if got := seen.Load(); got != 2 {
		t.Errorf("the caller's hook ran %d times, want 2 (once per traced request)", got)
	}
}

// lingeringRT stands in for a transport whose dial for a request outlived
// it (net/http dials on the request's context values): it keeps the
// first request's context and answers every request as a settled one.
type lingeringRT struct {
	kept context.Context
}

func (l *lingeringRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if l.kept == nil {
		l.kept = context.WithoutCancel(r.Context())
	}
	tr := httptrace.ContextClientTrace(r.Context())
	if tr != nil && tr.GotConn != nil {
		tr.GotConn(httptrace.GotConnInfo{})
	}
	_, _ = io.Copy(io.Discard, r.Body)
	if tr != nil && tr.WroteRequest != nil {
		tr.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"data":[{"index":0,"embedding":[1]}]}`)), Request: r}, nil
}

// TestCallerTraceNotComposedIntoPooledHooks: a traced request composes
// its caller's hooks into a copy, never into the recycled call's own
// trace, which an earlier untraced request's lingering dial still sees.
func TestCallerTraceNotComposedIntoPooledHooks(t *testing.T) {
	for range 5 {
		c, _ := newTestClient(t, http.NotFoundHandler(), Config{})
		rt := &lingeringRT{}
		c.rt = rt
		if res := c.Embed(context.Background(), EmbedRequest{Model: "m", Input: []string{"x"}}); res.Err != nil {
			t.Fatal(res.Err)
		}
		traced := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{TLSHandshakeStart: func() {}})
		if res := c.Embed(traced, EmbedRequest{Model: "m", Input: []string{"x"}}); res.Err != nil {
			t.Fatal(res.Err)
		}
		if tr := httptrace.ContextClientTrace(rt.kept); tr == nil || tr.TLSHandshakeStart != nil {
			t.Fatalf("the first request's trace %+v: the caller's TLS hook was composed into it", tr)
		}
	}
}

// TestRetrieveDecodeForgetsAnEarlierAttempt: one retrieve exchange decodes
// every attempt of a retry policy; an attempt's "error" does not outlive
// it into the next attempt's success.
func TestRetrieveDecodeForgetsAnEarlierAttempt(t *testing.T) {
	var x retrieveExchange
	if err := x.decode([]byte(`{"error":{"message":"busy"}}`)); err != nil || !errFromTarget(x.errField()) {
		t.Fatalf("first attempt: %v, error %s", err, x.errField())
	}
	if err := x.decode([]byte(`{"data":[]}`)); err != nil || errFromTarget(x.errField()) || x.out.Data == nil {
		t.Fatalf("second attempt: %v, error %s, data %v", err, x.errField(), x.out.Data)
	}
}
