package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// streamBody builds n OpenAI-style token chunks plus usage and [DONE].
func streamBody(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok`)
		b.WriteByte(byte('a' + i%26))
		b.WriteString(`"},"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkSSEReader measures the SSE parser alone on OpenAI-sized token
// events delivered in 4 KiB reads.
func BenchmarkSSEReader(b *testing.B) {
	body := streamBody(10000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		r := NewSSEReader(&chunkedReader{data: body, size: 4096}, 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkStreamDecode measures what the client does per token: parse
// the SSE event, decode the JSON chunk, timestamp the token.
func BenchmarkStreamDecode(b *testing.B) {
	body := streamBody(10000)
	c := &Client{cfg: Config{}.withDefaults()}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	tokens := 0
	for b.Loop() {
		var res Result
		cl := &call{ctx: context.Background(), body: &chunkedReader{data: body, size: 4096}}
		c.readStream(cl, &ChatRequest{}, &res)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		tokens += len(res.Tokens)
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkChatStreamLoopback is one streamed chat of 100 tokens over
// loopback HTTP, end to end.
func BenchmarkChatStreamLoopback(b *testing.B) {
	body := streamBody(100)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
	srv := newBenchServer(b, h)
	c, err := NewClient(Config{BaseURL: srv, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	req := ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: strings.Repeat("x", 100)}}, Stream: true}
	b.ReportAllocs()
	for b.Loop() {
		if res := c.Chat(context.Background(), req); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

type chunkedReader struct {
	data []byte
	size int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// BenchmarkSSEReaderCR: CR-only line endings must not cost a rescan of
// the buffer per line.
func BenchmarkSSEReaderCR(b *testing.B) {
	body := bytes.ReplaceAll(streamBody(10000), []byte("\n"), []byte("\r"))
	b.SetBytes(int64(len(body)))
	events := 0
	for b.Loop() {
		r := NewSSEReader(&chunkedReader{data: body, size: 32 << 10}, 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// instantEmbed answers every embeddings request at once with one
// two-dimensional vector, like bench/load's server.
func instantEmbed(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"m","usage":{"prompt_tokens":4,"total_tokens":4}}`)
}

// BenchmarkEmbedLoopback is one embeddings request over loopback HTTP
// with the protocol headers a run sends (the server's cost and
// allocations are in the figures too: same process).
func BenchmarkEmbedLoopback(b *testing.B) {
	srv := newBenchServer(b, http.HandlerFunc(instantEmbed))
	c, err := NewClient(Config{BaseURL: srv, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	hdr := http.Header{"X-Tenant-Id": {"default"}, "X-Request-Priority": {"normal"}, "X-Request-Type": {"embedding"}, "X-Slo-Deadline-Ms": {"1000"}}
	req := EmbedRequest{Model: "m", Input: []string{"the quick brown fox"}, Header: hdr}
	b.ReportAllocs()
	for b.Loop() {
		if res := c.Embed(context.Background(), req); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}
