package traffic_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// instantServer answers the paths an embeddings run uses at once, like
// bench/load's server.
func instantServer(tb testing.TB) string {
	mux := http.NewServeMux()
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		}
	}
	mux.HandleFunc("/v1/embeddings", answer(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"m","usage":{"prompt_tokens":4,"total_tokens":4}}`))
	mux.HandleFunc("/v1/models", answer(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
	mux.HandleFunc("/", answer(""))
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkSendEmbedding is the per-request path of an embeddings run
// up to its record: protocol headers, the request body, the client call
// over loopback HTTP, the record's timing (the server's cost and
// allocations are in the figures too: same process).
func BenchmarkSendEmbedding(b *testing.B) {
	ctx := context.Background()
	t, err := target.Open(ctx, target.Config{URL: instantServer(b)}, target.Options{Models: []string{"m"}})
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close(ctx)
	env := &workload.Env{Target: t, Start: time.Now()}
	shapes := traffic.Shapes{Embedding: traffic.EmbedShape{Model: "m", Inputs: 1, Words: 4}}
	it := traffic.Item{Type: protocol.TypeEmbedding, Tenant: "default", Priority: protocol.PriorityNormal}
	b.ReportAllocs()
	seq := 0
	for b.Loop() {
		it.Text = uint64(seq)
		rec := shapes.Send(ctx, env, record.Request{Seq: seq, Kind: "request", Phase: "fifo"}, it, time.Now(), time.Second)
		if !rec.OK {
			b.Fatal(rec.Error)
		}
		seq++
	}
}
