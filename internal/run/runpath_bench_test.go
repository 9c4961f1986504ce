package run

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// instantEmbedServer answers as bench/load's server does, at once.
func instantEmbedServer(tb testing.TB) string {
	mux := http.NewServeMux()
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		}
	}
	mux.HandleFunc("/v1/embeddings", answer(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"bench-embed","usage":{"prompt_tokens":4,"total_tokens":4}}`))
	mux.HandleFunc("/v1/models", answer(`{"object":"list","data":[{"id":"bench-embed","object":"model"}]}`))
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkRunPathEmbedding is one embeddings request through everything
// `sagebench run -e Q2` does for it after the driver hands it to a
// worker (what bench/load's bare driver does not do): the record's id,
// the protocol headers, the body, the client call over loopback HTTP,
// the answer read and parsed, the record's timing, Q2's kept copy
// (reqset), the sink (redaction, summary collector, requests.jsonl).
// The in-process server's allocations are in the figures too.
// Sub-benchmark bare is bench/load's bare driver's request (net/http,
// the same body, the answer drained) against the same server: run − bare
// is what the run path adds per request.
func BenchmarkRunPathEmbedding(b *testing.B) {
	url := instantEmbedServer(b)
	b.Run("run", func(b *testing.B) { benchRunPath(b, url) })
	b.Run("bare", func(b *testing.B) { benchBarePath(b, url) })
}

func benchBarePath(b *testing.B, url string) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConns: 100, MaxIdleConnsPerHost: 100}}
	defer client.CloseIdleConnections()
	const body = `{"model":"bench-embed","input":["the quick brown fox"]}`
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/embeddings", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func benchRunPath(b *testing.B, url string) {
	ctx := context.Background()
	t, err := target.Open(ctx, target.Config{URL: url}, target.Options{Models: []string{"bench-embed"}})
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close(ctx)
	w, err := record.CreateRequestWriter(filepath.Join(b.TempDir(), "requests.jsonl"), 0)
	if err != nil {
		b.Fatal(err)
	}
	snk := newSink(summary.NewCollector(), w, t.Redactor())
	kept := &reqset.Set{}
	kept.Grow(b.N)
	env := &workload.Env{Target: t, Start: time.Now(), Record: func(r record.Request) { kept.Add(r); snk.Record(r) }}
	shapes := traffic.Shapes{Embedding: traffic.EmbedShape{Model: "bench-embed", Inputs: 1, Words: 4}}
	it := traffic.Item{Type: protocol.TypeEmbedding, Tenant: "default", Priority: protocol.PriorityNormal}
	b.ReportAllocs()
	b.ResetTimer() // b.N, not b.Loop: Q2 grows its set by the schedule's length first
	seq := 0
	for range b.N {
		it.Text = uint64(seq)
		rec := record.Request{ID: traffic.RequestID("fifo", seq), Seq: seq, Kind: "request", Phase: "fifo"}
		shapes.Do(ctx, env, rec, it, time.Now(), time.Second, func(r record.Request) {
			r.SLOMet = r.OK
			env.Record(r)
		})
		seq++
	}
	b.StopTimer()
	if err := snk.close(); err != nil {
		b.Fatal(err)
	}
	if got := kept.View(); len(got) != seq || !got[seq-1].OK {
		b.Fatalf("kept %d records for %d requests (last ok: %v)", len(got), seq, len(got) > 0 && got[len(got)-1].OK)
	}
}
