package openai

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestResponseHeadersBounded: the X-Engine-Id a target sends is kept
// redacted and cut to MaxEngineBytes, and a header block past
// MaxResponseHeaderBytes fails the request too_large (a 9 MB
// X-Engine-Id made every requests.jsonl line 54 MB).
func TestResponseHeadersBounded(t *testing.T) {
	t.Setenv("SAGEBENCH_TEST_KEY", "sk-engine-header-key-123")
	for _, tc := range []struct {
		name, engine string
		class        string
	}{
		{"key in the engine id", "llm-" + base64.StdEncoding.EncodeToString([]byte("Bearer sk-engine-header-key-123")), ""},
		{"a 64 KiB engine id", strings.Repeat("e", 64<<10), ""},
		{"a 2 MiB engine id", strings.Repeat("e", 2<<20), ClassTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("X-Engine-Id", tc.engine)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
			}), Config{APIKeyEnv: "SAGEBENCH_TEST_KEY"})
			res := c.Chat(context.Background(), ChatRequest{Model: "m"})
			if res.ErrClass != tc.class {
				t.Fatalf("class %q (%v), want %q", res.ErrClass, res.Err, tc.class)
			}
			if len(res.Engine) > MaxEngineBytes || strings.Contains(res.Engine, base64.StdEncoding.EncodeToString([]byte("Bearer sk-engine"))[:12]) {
				t.Errorf("engine kept as %q (%d bytes)", res.Engine[:min(len(res.Engine), 80)], len(res.Engine))
			}
		})
	}
}
