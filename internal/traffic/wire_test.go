package traffic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// capture is a fake OpenAI server that keeps every chat request body.
type capture struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (c *capture) serve(t testing.TB) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		c.mu.Lock()
		c.bodies = append(c.bodies, body)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOutputControlOnTheWire: a URL target gets ignore_eos: true and
// min_tokens = max_tokens by default (vLLM's dialect), only ignore_eos
// or neither when output_control says so; records carry the intended
// lengths and the server's usage side by side.
func TestOutputControlOnTheWire(t *testing.T) {
	tests := []struct {
		name, control string
		ignoreEOS     bool
		minTokens     bool
	}{
		{"default is vllm", "", true, true},
		{"vllm", target.OutputVLLM, true, true},
		{"ignore_eos only", target.OutputIgnoreEOS, true, false},
		{"none", target.OutputNone, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c capture
			tgt, err := target.Open(context.Background(), target.Config{URL: c.serve(t), OutputControl: tc.control}, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tgt.Close(context.Background())
			llm := traffic.LLMShape{Model: "m", Shape: shape.Of(40, 17)}
			env := &workload.Env{Target: tgt, Start: time.Now()}
			rec := traffic.Shapes{LLM: llm}.Send(context.Background(), env, record.Request{ID: "a"},
				traffic.Item{Type: protocol.TypeLLM, Tenant: "t", Priority: "normal", Text: 3}, time.Now(), 0)
			if !rec.OK || rec.InputTokens != 40 || rec.OutputTokens != 17 || rec.PromptTok != 5 || rec.OutputTok != 1 {
				t.Fatalf("record %+v", rec)
			}
			b := c.bodies[0]
			if got, ok := b["ignore_eos"].(bool); got != tc.ignoreEOS || ok != tc.ignoreEOS {
				t.Errorf("ignore_eos %v (present %v), want %v", b["ignore_eos"], ok, tc.ignoreEOS)
			}
			if got, ok := b["min_tokens"].(float64); ok != tc.minTokens || (ok && got != 17) {
				t.Errorf("min_tokens %v (present %v), want 17: %v", b["min_tokens"], ok, tc.minTokens)
			}
			if b["max_tokens"].(float64) != 17 {
				t.Errorf("max_tokens %v", b["max_tokens"])
			}
		})
	}
	if err := (target.Config{URL: "http://127.0.0.1:1", OutputControl: "sglang"}).Validate(); err == nil {
		t.Error("an unknown output_control is accepted")
	}
}
