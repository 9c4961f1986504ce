package run

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
)

// tokenizeServer is a target whose POST /tokenize counts the messages'
// text in the default tokenizer plus extra tokens per request (what a
// chat template adds) for model m, or has no /tokenize when extra < 0.
func tokenizeServer(t *testing.T, extra int) *target.Target {
	return tokenizeServerOf(t, map[string]int{"m": extra})
}

// tokenizeServerOf is tokenizeServer with an extra per model (a model not
// in extra is refused); no /tokenize when every extra is < 0.
func tokenizeServerOf(t *testing.T, extra map[string]int) *target.Target {
	t.Helper()
	synth := shape.DefaultSynth()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
	})
	if slices.ContainsFunc(slices.Collect(maps.Values(extra)), func(n int) bool { return n >= 0 }) {
		mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model    string                 `json:"model"`
				Messages []chattemplate.Message `json:"messages"`
				Gen      bool                   `json:"add_generation_prompt"`
			}
			err := json.NewDecoder(r.Body).Decode(&req)
			n, known := extra[req.Model]
			if err != nil || !known || n < 0 || !req.Gen {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
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

// TestTokenizeCheckPerModel: the preflight checks every model the run's
// classes ask for, once each, and reports each on its own: the class
// whose server counts 3 more tokens per prompt is named with the
// mismatch, the one that agrees as agreeing; a model the server refuses
// (an embedding model without chat /tokenize, say) adds no note.
func TestTokenizeCheckPerModel(t *testing.T) {
	tgt := tokenizeServerOf(t, map[string]int{"chat-a": 3, "chat-b": 0})
	notes := tokenizeChecks(t.Context(), tgt, shape.DefaultSynth(), []string{"chat-a", "embed", "chat-b", "chat-a", ""})
	if len(notes) != 2 {
		t.Fatalf("%d notes, want one per chat model: %q", len(notes), notes)
	}
	if !strings.Contains(notes[0], "model chat-a") || !strings.Contains(notes[0], "differ from sagebench's on 8 of 8") || !strings.Contains(notes[0], "+3.0 per prompt") {
		t.Errorf("chat-a: %q, want its mismatch of +3 per prompt", notes[0])
	}
	if !strings.Contains(notes[1], "model chat-b") || !strings.Contains(notes[1], "counts every one of 8 sample prompts as sagebench does") {
		t.Errorf("chat-b: %q, want it to agree", notes[1])
	}
}
