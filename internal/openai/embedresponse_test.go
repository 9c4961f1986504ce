package openai

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

var embedSamples = []string{
	`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"m","usage":{"prompt_tokens":4,"total_tokens":4}}`,
	`{"data":[{"index":1,"embedding":[1e-3,-2E+2,0]},{"index":0,"embedding":[3.4028235e38]}],"usage":{"prompt_tokens":7,"completion_tokens":0,"total_tokens":7}}`,
	` { "data" : [ ] , "usage" : null , "error" : null } `,
	`{"data":[{"index":0,"embedding":[]}],"error":{"message":"x"}}`,
	`{"data":null}`,
	`{"data":[null]}`,
	`{"Data":[{"index":0,"embedding":[1]}]}`,
	`{"data":[{"index":0,"embedding":[1],"index":1}]}`,
	`{"data":[{"index":1.0,"embedding":[1]}]}`,
	`{"data":[{"index":0,"embedding":[1e39]}]}`,
	`{"data":[{"index":0,"embedding":[1,]}]}`,
	`{"data":[{"index":99999999999999999999,"embedding":[1]}]}`,
	`{"data":[{"index":0,"embedding":["1"]}]}`,
	`{"usage":{"prompt_tokens":-1,"PROMPT_TOKENS":2}}`,
	`{"data":[{"index":0,"embedding":[1]}]} x`,
	`[]`,
	`{"data":[{"index":0,"embedding":[1]}],"data":[]}`,
	`{"error":"boom","extra":{"a":[1,{"b":null}]}}`,
}

// checkFastEmbed: whenever the fast path accepts data, encoding/json
// accepts it too and decodes the same.
func checkFastEmbed(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	var got embedResponse
	if !fastEmbed(data, &got) {
		return false
	}
	var want embedResponse
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fast path accepted %q, encoding/json: %v", data, err)
	}
	decoded := func(r *embedResponse) []any { return []any{r.Data, r.Usage, r.Error} } // not the fast path's room
	if !reflect.DeepEqual(decoded(&got), decoded(&want)) {
		t.Fatalf("%q:\nfast %+v\njson %+v", data, got, want)
	}
	return true
}

func TestFastEmbed(t *testing.T) {
	fast := map[int]bool{0: true, 1: true, 2: true, 3: true, 17: true} // the rest goes to encoding/json
	for i, s := range embedSamples {
		if got := checkFastEmbed(t, []byte(s)); got != fast[i] {
			t.Errorf("sample %d %s: fast path %v, want %v", i, s, got, fast[i])
		}
	}
}

// TestEmbedDecodeFallback: what the fast path leaves, encoding/json
// decodes (or rejects) as before.
func TestEmbedDecodeFallback(t *testing.T) {
	var r embedResponse
	if err := r.decode([]byte(`{"data":[{"index":0,"embedding":[1],"index":1}],"Usage":{"prompt_tokens":3}}`)); err != nil {
		t.Fatal(err)
	}
	if len(r.Data) != 1 || r.Data[0].Index != 1 || r.Usage == nil || r.Usage.PromptTokens != 3 {
		t.Errorf("decoded %+v", r)
	}
	if err := r.decode([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`)); err == nil {
		t.Error("a float32 overflow decoded without error")
	}
}

func TestFastEmbedLargeVector(t *testing.T) {
	vals := make([]string, 1024)
	for i := range vals {
		vals[i] = "0." + strings.Repeat("1", i%9+1)
	}
	data := []byte(`{"data":[{"index":0,"embedding":[` + strings.Join(vals, ",") + `]}]}`)
	if !checkFastEmbed(t, data) {
		t.Fatal("a 1024-dimension vector left the fast path")
	}
	var r embedResponse
	fastEmbed(data, &r)
	if len(r.Data[0].Embedding) != 1024 || math.Abs(float64(r.Data[0].Embedding[8])-0.111111111) > 1e-6 {
		t.Errorf("vector %d long, [8] = %v", len(r.Data[0].Embedding), r.Data[0].Embedding[8])
	}
}

func FuzzEmbedResponse(f *testing.F) {
	for _, s := range embedSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFastEmbed(t, data) })
}

// BenchmarkEmbedDecode is decoding one small embeddings answer.
func BenchmarkEmbedDecode(b *testing.B) {
	data := []byte(embedSamples[0])
	for _, mode := range []struct {
		name   string
		decode func(*embedResponse) error
	}{
		{"encoding-json", func(r *embedResponse) error { return json.Unmarshal(data, r) }},
		{"fast", func(r *embedResponse) error { return r.decode(data) }},
	} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r embedResponse
				if err := mode.decode(&r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
