package target

import "testing"

// FuzzDecodeTokenize: any answer decodes to a count ≥ 0 that agrees
// with its tokens, or to an error; it never panics.
func FuzzDecodeTokenize(f *testing.F) {
	for _, s := range []string{`{"count":3,"tokens":[1,2,3],"max_model_len":8192}`, `{"count":2,"tokens":[1]}`, `{"count":-1}`, `{}`, `[`, `{"count":1e99}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeTokenize(b)
		if err == nil && n < 0 {
			t.Fatalf("count %d from %q", n, b)
		}
	})
}
