package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzChatRequest feeds arbitrary bodies through the chat decoder and
// validation: they must end in a request or a 4xx, never a panic.
func FuzzChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"max_completion_tokens":1}`,
		`{"messages":[]}`, `{"messages":"x"}`, `[]`, `null`, `{"max_tokens":1e99}`, `{"stream_options":{"include_usage":1}}`,
		`{"messages":[{"role":"user","content":"hi"}],"n":1e9}`, `{"n":1.0}`, `{"n":"2"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req chatRequest
		if aerr := decodeJSON(bytes.NewReader(body), &req); aerr != nil {
			if aerr.Status/100 != 4 {
				t.Fatalf("decode error status %d", aerr.Status)
			}
			return
		}
		if _, _, aerr := renderPrompt(req.Messages); aerr != nil && aerr.Status != 400 {
			t.Fatalf("render status %d", aerr.Status)
		}
		n, aerr := req.maxTokens(256, 1000)
		if aerr == nil && (n < 1 || n > 1000) {
			t.Fatalf("max tokens %d accepted", n)
		}
	})
}

func FuzzEmbeddingInput(f *testing.F) {
	for _, s := range []string{`"a"`, `["a","b"]`, `[]`, `[1]`, `""`, `null`, `{"a":1}`, `[["a"]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		inputs, aerr := embeddingInputs(raw, 16)
		if aerr != nil {
			if aerr.Status != 400 {
				t.Fatalf("status %d", aerr.Status)
			}
			return
		}
		if len(inputs) == 0 || len(inputs) > 16 {
			t.Fatalf("%d inputs accepted", len(inputs))
		}
		for _, s := range inputs {
			if s == "" {
				t.Fatal("empty input accepted")
			}
		}
	})
}

func FuzzRequestHeaders(f *testing.F) {
	f.Add("tenant", "high", "250", "llm")
	f.Add("", "", "", "")
	f.Add("x", "URGENT", "-1", "?")
	f.Add("x", "low", "99999999999999999999", "rag")
	f.Fuzz(func(t *testing.T, tenant, prio, deadline, typ string) {
		h := http.Header{}
		h.Set("X-Tenant-Id", tenant)
		h.Set("X-Request-Priority", prio)
		h.Set("X-SLO-Deadline-Ms", deadline)
		h.Set("X-Request-Type", typ)
		m, aerr := parseMeta(h, "llm")
		if aerr != nil {
			if aerr.Status != 400 {
				t.Fatalf("status %d", aerr.Status)
			}
			return
		}
		if m.Deadline < 0 {
			t.Fatalf("negative deadline %v accepted", m.Deadline)
		}
		if !utf8.ValidString(m.Tenant) {
			t.Fatalf("tenant %q accepted: not valid UTF-8, unusable as a metric label", m.Tenant)
		}
		if l := typeLabel(m.Type); l == "" {
			t.Fatal("empty type label")
		}
	})
}

// FuzzAppendJSONString checks the hand-written token encoder against
// encoding/json: the output always decodes, to the input made valid UTF-8.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"hello", "\"quoted\"\n", "\x00\x1f<>&", "é\u2028\u2029", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q encoded as invalid JSON %s: %v", s, b, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = string([]rune(s)) // invalid bytes become U+FFFD
		}
		if got != want {
			t.Fatalf("round trip %q -> %s -> %q", s, b, got)
		}
	})
}

func FuzzAppendFloats(f *testing.F) {
	f.Add(float32(0.1), float32(-3.4e38), float32(1e-45))
	f.Add(float32(1), float32(0), float32(-0.0000123))
	f.Fuzz(func(t *testing.T, a, b, c float32) {
		in := []float32{a, b, c}
		out := appendFloats(nil, in)
		var got []float32
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v encoded as invalid JSON %s: %v", in, out, err)
		}
		for i, v := range in {
			if v != v || v > 3.4028235e38 || v < -3.4028235e38 { // NaN, ±Inf become 0
				v = 0
			}
			if got[i] != v {
				t.Fatalf("%v -> %s -> %v", in, out, got)
			}
		}
	})
}
