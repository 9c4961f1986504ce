package run

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
)

// tokenizeServer is a target whose POST /tokenize counts the messages'
// text in the default tokenizer plus extra tokens per request (what a
// chat template adds), or has no /tokenize when extra < 0.
func tokenizeServer(t *testing.T, extra int) *target.Target {
	t.Helper()
	synth := shape.DefaultSynth()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
	})
	if extra >= 0 {
		mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model    string                 `json:"model"`
				Messages []chattemplate.Message `json:"messages"`
				Gen      bool                   `json:"add_generation_prompt"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" || !req.Gen {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			n := extra
			for _, m := range req.Messages {
				n += synth.Tokenizer().Count(m.Content)
			}
			json.NewEncoder(w).Encode(map[string]any{"count": n, "max_model_len": 8192})
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tgt, err := target.Open(t.Context(), target.Config{URL: srv.URL}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close(context.Background()) })
	return tgt
}

// TestTokenizeCheck: a server that counts 5 more tokens per prompt than
// sagebench (its chat template's) is reported with both counts; one that
// counts the same is reported as agreeing; one without /tokenize adds no
// note.
func TestTokenizeCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra int
		want  string
	}{
		{"miscounts", 5, "differ from sagebench's on 8 of 8 sample prompts"},
		{"agrees", 0, "counts every one of 8 sample prompts as sagebench does"},
		{"no tokenize", -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			note := tokenizeCheck(t.Context(), tokenizeServer(t, tc.extra), shape.DefaultSynth(), "m")
			if tc.want == "" && note != "" || !strings.Contains(note, tc.want) {
				t.Fatalf("note %q, want %q", note, tc.want)
			}
			if tc.extra == 5 && !strings.Contains(note, "+5.0 per prompt") {
				t.Errorf("note %q does not say by how much", note)
			}
		})
	}
}
