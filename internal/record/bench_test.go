package record

import (
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
