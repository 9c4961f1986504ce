package stack

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// FuzzTokenize: any /tokenize body is answered with a status and JSON,
// never a panic; a 200's count is its tokens'.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{`{"model":"m","prompt":"hello world"}`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","prompt":"x","messages":[]}`, `{"model":"x"}`, `{`, `{"model":"m","messages":[{"role":"user","content":["a"]}]}`} {
		f.Add([]byte(s))
	}
	s := &Stack{tokenizer: func() (tokenizer.Tokenizer, error) { return tokenizer.Default(), nil }}
	f.Fuzz(func(t *testing.T, b []byte) {
		status, out := s.tokenize(bytes.NewReader(b), map[string]bool{"m": true}, nil)
		if status == 0 || len(out) == 0 || out[0] != '{' {
			t.Fatalf("status %d, body %q", status, out)
		}
		if status == http.StatusOK && !bytes.Contains(out, []byte(`"count":`)) {
			t.Fatalf("a 200 without a count: %s", out)
		}
	})
}
