package gateway

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/remote"
)

// instantEmbedder answers at once: what remains is the gateway's cost.
func benchGateway(b *testing.B, engines map[string]Member) *httptest.Server {
	b.Helper()
	g, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	for id, e := range engines {
		if err := g.Add(id, e); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(g.Handler())
	b.Cleanup(func() { srv.Close(); _ = g.Close() })
	return srv
}

func reportLatency(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-us")
}

// BenchmarkEmbedding compares, side by side, calling an (instant) embedding
// engine directly with calling it through the gateway over loopback HTTP:
// the difference is the gateway's overhead per request (HTTP, JSON,
// admission, queueing, routing).
func BenchmarkEmbedding(b *testing.B) {
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 64, dim: 384}
	b.Run("direct", func(b *testing.B) {
		d := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if _, _, err := emb.Embed(context.Background(), []string{"what is the capital of france"}); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t0))
		}
		reportLatency(b, d)
	})
	b.Run("gateway", func(b *testing.B) {
		srv := benchGateway(b, map[string]Member{"emb": {Embedder: emb}})
		c := srv.Client()
		body := []byte(`{"model":"m-emb","input":"what is the capital of france"}`)
		d := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			resp, err := c.Post(srv.URL+"/v1/embeddings", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("status %d", resp.StatusCode)
			}
			d = append(d, time.Since(t0))
		}
		reportLatency(b, d)
	})
	emb.calls = nil
}

// BenchmarkChatStream streams 64-token completions from an instant engine
// through the gateway: the gateway's per-token cost, client included.
func BenchmarkChatStream(b *testing.B) {
	srv := benchGateway(b, map[string]Member{"e": {LLM: newFakeLLM("e", 1024)}})
	c := srv.Client()
	body := chatBody("benchmark", 64, true)
	tokens := 0
	start := time.Now()
	for b.Loop() {
		resp, err := c.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadSlice('\n')
			if bytes.Contains(line, []byte(`"content":`)) {
				tokens++
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(tokens)/time.Since(start).Seconds(), "tokens/s")
}

func BenchmarkChunkEncode(b *testing.B) {
	enc := newChunkEncoder("chatcmpl-abc123", "meta-llama/Llama-3.1-8B-Instruct", 1795965110)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.token(buf[:0], " token", false)
	}
	_ = http.StatusOK
}

// BenchmarkEmbeddingSideBySide issues embedding requests on an open-loop
// schedule at 2,000 requests/s in total, alternating between calling an
// instant engine directly and calling it through the gateway over loopback
// HTTP, and reports both latency distributions and the added p50/p99.
func BenchmarkEmbeddingSideBySide(b *testing.B) {
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 256, dim: 384}
	srv := benchGateway(b, map[string]Member{"emb": {Embedder: emb}})
	c := srv.Client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
	body := []byte(`{"model":"m-emb","input":"what is the capital of france"}`)
	for i := 0; i < 200; i++ { // warm up connections
		resp, err := c.Post(srv.URL+"/v1/embeddings", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	const rate = 2000
	n := 2 * b.N
	lat := [2][]time.Duration{make([]time.Duration, n), make([]time.Duration, n)}
	done := make(chan struct{}, n)
	start := time.Now()
	b.ResetTimer()
	for i := 0; i < n; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / rate)))
		go func(i int) {
			defer func() { done <- struct{}{} }()
			t0 := time.Now()
			if i%2 == 0 {
				_, _, _ = emb.Embed(context.Background(), []string{"what is the capital of france"})
			} else {
				resp, err := c.Post(srv.URL+"/v1/embeddings", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			lat[i%2][i/2] = time.Since(t0)
		}(i)
	}
	for i := 0; i < n; i++ {
		<-done
	}
	b.StopTimer()
	p := func(d []time.Duration, q float64) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[int(q*float64(len(d)-1))]
	}
	dp50, dp99 := p(lat[0][:b.N], 0.5), p(lat[0][:b.N], 0.99)
	gp50, gp99 := p(lat[1][:b.N], 0.5), p(lat[1][:b.N], 0.99)
	b.ReportMetric(float64(dp50.Microseconds()), "direct-p50-us")
	b.ReportMetric(float64(dp99.Microseconds()), "direct-p99-us")
	b.ReportMetric(float64(gp50.Microseconds()), "gateway-p50-us")
	b.ReportMetric(float64(gp99.Microseconds()), "gateway-p99-us")
	b.ReportMetric(float64((gp50 - dp50).Microseconds()), "added-p50-us")
	b.ReportMetric(float64((gp99 - dp99).Microseconds()), "added-p99-us")
}

// BenchmarkEmbeddingHop measures the gateway's own cost on the process
// engine path in one process: a client calling an engine (a gateway over
// an instant 1024-dimension embedder, as `serve engine` runs it) over
// loopback HTTP, and the same client calling a gateway in front of that
// engine through a remote client. gateway minus engine is the front
// gateway's CPU and allocations per request, one more hop included.
func BenchmarkEmbeddingHop(b *testing.B) {
	eng := benchGateway(b, map[string]Member{"emb": {Embedder: &fakeEmbedder{id: "emb", model: "m-emb", slots: 256, dim: 1024}}})
	re, err := remote.NewEmbedder(remote.Config{ID: "emb", URL: eng.URL, Model: "m-emb", Slots: 256})
	if err != nil {
		b.Fatal(err)
	}
	front := benchGateway(b, map[string]Member{"emb": {Embedder: re}})
	body := []byte(`{"model":"m-emb","input":"what is the capital of france"}`)
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
	}{{"engine", eng}, {"gateway", front}} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.srv.Client()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Post(tc.srv.URL+"/v1/embeddings", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
