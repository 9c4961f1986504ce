package remote

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// oracleBody is the embeddings response as encoding/json reads it (what
// Embed used before the one-pass decoder).
type oracleBody struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

func TestDecodeEmbeddings(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []embedItem
		tokens     int
		fails      bool
	}{
		{"openai shape", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1e-3,2]}],"model":"m","usage":{"prompt_tokens":7,"total_tokens":7}}`,
			[]embedItem{{0, []float32{0.5, -1e-3, 2}, nil}}, 7, false},
		{"fields in any order, unknown ones skipped", ` { "usage" : {"total_tokens":3,"prompt_tokens":3}, "x":[{"a":"\"]}"},null,true,-0.5e+2], "data" : [ {"embedding":[1],"index":1,"extra":{}} , {"index":0,"embedding":[]} ] } trailing`,
			[]embedItem{{1, []float32{1}, nil}, {0, []float32{}, nil}}, 3, false},
		{"keys match case-insensitively", `{"DATA":[{"Index":0,"Embedding":[1]}],"Usage":{"Prompt_Tokens":1}}`, []embedItem{{0, []float32{1}, nil}}, 1, false},
		{"escaped key", `{"d\u0061ta":[{"index":0,"embedding":[1]}]}`, []embedItem{{0, []float32{1}, nil}}, 0, false},
		{"null embedding is no vector", `{"data":[{"index":0,"embedding":null}]}`, []embedItem{{0, nil, nil}}, 0, false},
		{"null body", `null`, nil, 0, false},
		{"repeated data", `{"data":[],"data":[]}`, nil, 0, true},
		{"repeated index", `{"data":[{"index":0,"index":1,"embedding":[1]}]}`, nil, 0, true},
		{"item without embedding", `{"data":[{"index":0}]}`, nil, 0, true},
		{"fractional index", `{"data":[{"index":1.5,"embedding":[1]}]}`, nil, 0, true},
		{"string number", `{"data":[{"index":0,"embedding":["1"]}]}`, nil, 0, true},
		{"beyond float32", `{"data":[{"index":0,"embedding":[1e39]}]}`, nil, 0, true},
		{"beyond float32 in plain notation", `{"data":[{"index":0,"embedding":[-` + strings.Repeat("9", 39) + `.5]}]}`, nil, 0, true},
		{"just below the float32 limit", `{"data":[{"index":0,"embedding":[3.4028234e38, ` + strings.Repeat("9", 38) + `]}]}`, []embedItem{{0, []float32{3.4028234e38, 1e38}, nil}}, 0, false},
		{"leading zero", `{"data":[{"index":0,"embedding":[01]}]}`, nil, 0, true},
		{"cut short", `{"data":[{"index":0,"embedding":[1,`, nil, 0, true},
		{"control byte in a string", "{\"x\":\"a\x01\"}", nil, 0, true},
		{"deep nesting", `{"x":` + string(bytes.Repeat([]byte("["), 2000)), nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := decodeEmbeddings([]byte(tc.body), nil)
			raw, rerr := decodeEmbeddingsRaw([]byte(tc.body))
			if (err != nil) != tc.fails || (rerr != nil) != tc.fails {
				t.Fatalf("err = %v, as text %v, want failure %v", err, rerr, tc.fails)
			}
			if tc.fails {
				return
			}
			checkRaw(t, got, raw)
			if got.tokens != tc.tokens || len(got.data) != len(tc.want) {
				t.Fatalf("got %+v, want %v (tokens %d)", got, tc.want, tc.tokens)
			}
			for i, w := range tc.want {
				g := got.data[i]
				if g.index != w.index || (g.vec == nil) != (w.vec == nil) || !equalBits(g.vec, w.vec) {
					t.Errorf("item %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// checkRaw: each vector's text reads as the parsed vector.
func checkRaw(t *testing.T, parsed, raw embedBody) {
	t.Helper()
	if len(raw.data) != len(parsed.data) || raw.tokens != parsed.tokens {
		t.Fatalf("as text %+v, parsed %+v", raw, parsed)
	}
	for i, r := range raw.data {
		p := parsed.data[i]
		if r.index != p.index || (r.raw == nil) != (p.vec == nil) {
			t.Fatalf("item %d as text %+v, parsed %+v", i, r, p)
		}
		var v []float32
		if r.raw != nil && (json.Unmarshal(r.raw, &v) != nil || !equalBits(v, p.vec)) {
			t.Fatalf("item %d text %q reads as %v, parsed %v", i, r.raw, v, p.vec)
		}
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// FuzzDecodeEmbeddings: the one-pass decoder never accepts what
// encoding/json refuses, and reads what it accepts exactly as
// encoding/json does.
func FuzzDecodeEmbeddings(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.0123,-0.5,3e-7]}],"model":"m","usage":{"prompt_tokens":7,"total_tokens":7}}`,
		`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3]}],"usage":{"prompt_tokens":3}}`,
		`{"DATA":[{"Index":0,"EMBEDDING":[1]}],"usage":null}`,
		`{"d\u0061ta":[{"index":0,"embedding":null}],"x":"\ud800"}`,
		`{"data":[{"index":-0,"embedding":[-0]}]} {`,
		`{"data":[{"index":0,"embedding":[1E+2,1e-50,3.4028235e38]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := decodeEmbeddings(b, nil)
		raw, rerr := decodeEmbeddingsRaw(b)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("parsed: %v; as text: %v: %q", err, rerr, b)
		}
		if err != nil {
			return
		}
		checkRaw(t, got, raw)
		var want oracleBody
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(&want); err != nil {
			t.Fatalf("accepted what encoding/json refuses (%v): %q", err, b)
		}
		if got.tokens != want.Usage.PromptTokens || len(got.data) != len(want.Data) {
			t.Fatalf("read %+v, encoding/json %+v: %q", got, want, b)
		}
		for i, w := range want.Data {
			g := got.data[i]
			if g.index != w.Index || (g.vec == nil) != (w.Embedding == nil) || !equalBits(g.vec, w.Embedding) {
				t.Fatalf("item %d read %+v, encoding/json %+v: %q", i, g, w, b)
			}
		}
	})
}

// BenchmarkDecodeEmbeddings reads one 1024-dimension embeddings answer (a
// bge-large engine's) with the one-pass decoder and with encoding/json.
func BenchmarkDecodeEmbeddings(b *testing.B) {
	var body bytes.Buffer
	body.WriteString(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[`)
	for i := range 1024 {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(json.Number(fmtFloat(float32(i%97)*0.0123456 - 0.3)).String())
	}
	body.WriteString(`]}],"model":"BAAI/bge-large-en-v1.5","usage":{"prompt_tokens":8,"total_tokens":8}}`)
	b.Run("onepass", func(b *testing.B) {
		b.ReportAllocs()
		var vals []float32
		for b.Loop() {
			var err error
			if _, vals, err = decodeEmbeddings(body.Bytes(), vals); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeEmbeddingsRaw(body.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v oracleBody
			if err := json.NewDecoder(bytes.NewReader(body.Bytes())).Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func fmtFloat(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }
