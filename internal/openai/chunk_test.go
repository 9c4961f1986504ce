package openai

import (
	"cmp"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var chunkSamples = []string{
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
	`{"choices":[{"delta":{"content":"a\nb\u00e9\"q\""}}]}`,
	`{"choices":[{"delta":{"content":null}}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"details":{"x":[1,2.5e3,-0.1,true,false,null]}}}`,
	`{"error":{"message":"boom","code":500}}`,
	`{"error":null,"choices":[{"delta":{"content":"x"}},{"delta":{"content":"y"}}]}`,
	` { "choices" : [ { "delta" : { "content" : "sp" } } ] } `,
	`{"choices":[{"delta":{"content":"x"}}]} trailing`,
	`{"choices":{"delta":7}}`,
	`{"choices":[{"delta":{"content":7}}]}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":01}}`,
	`{"a":"` + "\x01" + `"}`,
	`{"a":+1}`,
	`{"a":tru}`,
	`{"choi\u0063es":[{"delta":{"content":"esc key"}}]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}],"choices":[{"delta":{"content":"c"}}]}`,
	`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	`{"usage":{"prompt_tokens":1},"usage":null,"choices":[{"delta":null}]}`,
	`[]`, `null`, ``, `{`, `{"a"`, `{"a":}`, `{"a":1,}`,
	`{"choices":[{"delta":{"content":"a` + "\xff" + `b"}}]}`, // invalid UTF-8: encoding/json gives U+FFFD
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"think"},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"reasoning":"r\u00e9"},"finish_reason":""}]}`,
	`{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"},{"delta":{},"finish_reason":"length"}],"usage":{"completion_tokens":9}}`,
	`{"choices":[{"delta":{"content":"x"},"finish_reason":7}]}`,
	`{"choices":[{"delta":{"Reasoning_Content":"x"}}]}`,
	`{"choices":[{"delta":null,"delta":{"content":"a"},"delta":{"reasoning":"b"}}]}`,
}

// TestFastChunkAgreesWithEncodingJSON: whenever the fast path accepts a
// chunk, encoding/json accepts it too and decodes the same values.
func TestFastChunkAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range chunkSamples {
		checkFastChunk(t, []byte(s))
	}
}

func checkFastChunk(t *testing.T, data []byte) {
	t.Helper()
	var fast chunk
	if !fastChunk(data, &fast) {
		return
	}
	var slow jsonChunk
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", data, err)
	}
	if a, b := view(fast), viewJSON(slow); !reflect.DeepEqual(a, b) {
		t.Errorf("%q: fast path reads\n%+v\nencoding/json reads\n%+v", data, a, b)
	}
}

// chunkView is what the client reads of a chunk, decoded.
type chunkView struct {
	Content, Reasoning []string // the non-empty ones, in order
	Finished           int      // choices with a finish_reason
	Usage              *usage
	Error              bool
}

func view(ch chunk) chunkView {
	v := chunkView{Error: errFromTarget(ch.err)}
	for _, c := range ch.choices {
		if !c.content.empty() {
			v.Content = append(v.Content, c.content.text())
		}
		if r := c.reasoningText(); !r.empty() {
			v.Reasoning = append(v.Reasoning, r.text())
		}
		if c.finish {
			v.Finished++
		}
	}
	if ch.hasUsage {
		u := ch.usage
		v.Usage = &u
	}
	return v
}

func viewJSON(j jsonChunk) chunkView {
	v := chunkView{Usage: j.Usage, Error: errFromTarget(j.Error)}
	for _, c := range j.Choices {
		if c.Delta.Content != "" {
			v.Content = append(v.Content, c.Delta.Content)
		}
		if r := cmp.Or(c.Delta.ReasoningContent, c.Delta.Reasoning); r != "" {
			v.Reasoning = append(v.Reasoning, r)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			v.Finished++
		}
	}
	return v
}

func FuzzChunk(f *testing.F) {
	for _, s := range chunkSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastChunk(t, data)
	})
}

func contents(ch chunk) []string { return view(ch).Content }

// TestChunkDeepNesting: a hostile stream nesting arrays a million deep in
// one chunk must not be walked recursively (the fast path used 128 MiB of
// stack and a second of CPU per chunk); the fast path gives up past
// maxScanDepth and encoding/json, which bounds nesting, decides.
func TestChunkDeepNesting(t *testing.T) {
	nested := func(depth int) []byte {
		return []byte(`{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `,"choices":[{"delta":{"content":"ok"}}]}`)
	}
	tests := []struct {
		name    string
		data    []byte
		fast    bool
		wantErr bool
	}{
		{"shallow", nested(3), true, false},
		{"deeper than the fast path walks", nested(maxScanDepth + 1), false, false},
		{"a million deep", nested(1 << 20), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ch chunk
			if got := fastChunk(tc.data, &ch); got != tc.fast {
				t.Errorf("fastChunk = %v, want %v", got, tc.fast)
			}
			ch = chunk{}
			err := decodeChunk(tc.data, &ch)
			if (err != nil) != tc.wantErr {
				t.Fatalf("decodeChunk error %v, want error %v", err, tc.wantErr)
			}
			if err == nil && strings.Join(contents(ch), "") != "ok" {
				t.Errorf("contents %q, want ok", contents(ch))
			}
		})
	}
}
