package remote

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeChunk(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       chunk
		fails      bool
	}{
		{"token", `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
			chunk{Choices: []chunkChoice{{Delta: chunkDelta{Content: "hi"}}}}, false},
		{"escaped and unicode content", `{"choices":[{"delta":{"content":"a\n\"b\" \u00e9 é"}}]}`,
			chunk{Choices: []chunkChoice{{Delta: chunkDelta{Content: "a\n\"b\" é é"}}}}, false},
		{"usage with cached tokens", `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":2}}}`,
			chunk{Choices: []chunkChoice{}, Usage: &chunkUsage{PromptTokens: 3, CompletionTokens: 4, PromptTokensDetails: &chunkDetails{CachedTokens: 2}}}, false},
		{"error", `{"error":{"message":"boom","type":"x"}}`, chunk{Error: &chunkError{Message: "boom"}}, false},
		{"nulls", `{"choices":[null,{"delta":null}],"usage":null,"error":null}`, chunk{Choices: []chunkChoice{{}, {}}}, false},
		{"keys in any case", `{"Choices":[{"DELTA":{"Content":"x"}}]}`, chunk{Choices: []chunkChoice{{Delta: chunkDelta{Content: "x"}}}}, false},
		{"repeated key", `{"usage":{},"usage":{}}`, chunk{}, true},
		{"content not a string", `{"choices":[{"delta":{"content":5}}]}`, chunk{}, true},
		{"fractional count", `{"usage":{"prompt_tokens":1.5}}`, chunk{}, true},
		{"trailing data", `{} {}`, chunk{}, true},
		{"trailing NUL", "{}\x00", chunk{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeChunk([]byte(tc.body))
			if (err != nil) != tc.fails {
				t.Fatalf("err = %v, want failure %v", err, tc.fails)
			}
			if !tc.fails && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzDecodeChunk: the one-pass chunk decoder never accepts what
// json.Unmarshal refuses and reads what it accepts exactly as it does.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":" tok"},"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":2}}}`,
		`{"error":{"message":"Bearer sk-x","code":null}}`,
		`{"CHOICES":[null,{"Delta":{"content":"\ud800\u00e9\n"}}],"usage":{"prompt_tokens":null}}`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]} ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeChunk(b)
		if err != nil {
			return
		}
		var want chunk
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("accepted what encoding/json refuses (%v): %q", err, b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read %+v, encoding/json %+v: %q", got, want, b)
		}
	})
}

// BenchmarkDecodeChunk reads one token chunk as a sagebench engine writes
// it, with the one-pass decoder and with encoding/json.
func BenchmarkDecodeChunk(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-0eb527041","object":"chat.completion.chunk","created":1796133637,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}`)
	b.Run("onepass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeChunk(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c chunk
			if err := json.Unmarshal(body, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
