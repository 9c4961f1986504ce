package gateway

import (
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

// TestServerTiming: every answer carries the gateway's own timing from
// receipt — a trailer after a stream's last chunk, a header otherwise — so
// the client can record both sides.
func TestServerTiming(t *testing.T) {
	llm := newFakeLLM("e1", 4)
	llm.delay = 2 * time.Millisecond
	emb := &fakeEmbedder{id: "emb", model: "m-emb", slots: 8}
	h := newHarness(t, Config{}, map[string]Member{"e1": {LLM: llm}, "emb": {Embedder: emb}})
	for _, tc := range []struct {
		name      string
		path      string
		body      string
		inTrailer bool
	}{
		{"stream", "/v1/chat/completions", chatBody("p", 5, true), true},
		{"not streamed", "/v1/chat/completions", chatBody("p", 5, false), false},
		{"embeddings", "/v1/embeddings", `{"model":"m-emb","input":["a","b"]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", tc.path, tc.body, nil)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			src := r.header
			if tc.inTrailer {
				src = r.trailer
			}
			st, ok := protocol.ParseServerTiming(src.Get(protocol.HeaderServerTiming))
			if !ok || st.End <= 0 || st.FirstToken <= 0 || st.FirstToken > st.End {
				t.Errorf("server timing %q (%+v, ok %v); header %v trailer %v", src.Get(protocol.HeaderServerTiming), st, ok, r.header, r.trailer)
			}
		})
	}
}
