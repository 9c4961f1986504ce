package record

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkRequestWriter measures streaming one LLM request line (32 token
// times) to requests.jsonl.
func BenchmarkRequestWriter(b *testing.B) {
	w, err := CreateRequestWriter(filepath.Join(b.TempDir(), "requests.jsonl"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	r := Request{ID: "fifo-00001", Kind: "request", Type: "llm", Phase: "fifo", Tenant: "tenant-a", Priority: "normal",
		Model: "meta-llama/Llama-3.1-8B-Instruct", IntendedNS: 1e9, SentNS: 1e9 + 2e5, EndNS: 1.2e9, E2EMs: 200, OK: true, Status: 200}
	for i := range 32 {
		r.TokenNS = append(r.TokenNS, int64(1e9+4e7+int64(i)*6e6))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Write(r)
		}
	})
}

// embeddingRecord is a typical requests.jsonl line of an embeddings run.
func embeddingRecord() Request {
	q := 0.012
	return Request{ID: "fifo-00042", Seq: 42, Kind: "request", Type: "embedding", Phase: "fifo", Tenant: "default",
		Priority: "normal", Model: "bench-embed", IntendedNS: 8_400_000, SentNS: 8_480_123, FirstByte: 8_700_456,
		EndNS: 8_712_789, E2EMs: 0.312789, ServiceMs: 0.232666, LagMs: 0.080123, Status: 200, OK: true, SLOMet: true,
		PromptTok: 4, QueueMs: &q, ServerE2EMs: 0.05}
}

// BenchmarkRequestEncode measures encoding one embeddings record into its
// requests.jsonl line (the sink does it once per request).
func BenchmarkRequestEncode(b *testing.B) {
	r := embeddingRecord()
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(Bound(r)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			br := Bound(r)
			var err error
			if buf, err = AppendRequest(buf[:0], &br); err != nil {
				b.Fatal(err)
			}
		}
	})
}
