package gateway

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// textFake is a fakeEmbedder that hands over its vectors as JSON text
// (like a remote engine): text when set, else the fake's vectors written
// out. The gateway never calls its Embed.
type textFake struct {
	*fakeEmbedder
	text string
}

func (f *textFake) Embed(context.Context, []string) ([][]float32, engine.Usage, error) {
	panic("the gateway parsed vectors it could have written as text")
}

func (f *textFake) EmbedJSON(ctx context.Context, inputs []string) ([][]byte, engine.Usage, error) {
	vecs, u, err := f.fakeEmbedder.Embed(ctx, inputs)
	if err != nil {
		return nil, u, err
	}
	out := make([][]byte, len(vecs))
	for i, v := range vecs {
		out[i] = appendFloats(nil, v)
		if f.text != "" {
			out[i] = []byte(f.text)
		}
	}
	return out, u, nil
}

// TestTextVectors: vectors an engine hands over as JSON text are written
// as they are; base64 answers and index searches parse them; text that
// does not parse is the engine's failure (502), not a broken answer.
func TestTextVectors(t *testing.T) {
	for _, tc := range []struct {
		name, text, path, body string
		status                 int
		want                   string
	}{
		{"written as is", "[0.25,1e-7,-3]", "/v1/embeddings", `{"input":["a","b"]}`, 200,
			`"data":[{"object":"embedding","index":0,"embedding":[0.25,1e-7,-3]},{"object":"embedding","index":1,"embedding":[0.25,1e-7,-3]}]`},
		{"base64 parses them", "[2,0]", "/v1/embeddings", `{"input":"a","encoding_format":"base64"}`, 200, `"embedding":"AAAAQAAAAAA="`},
		{"search parses them", "[1,0]", "/v1/retrieve", `{"input":"a","top_k":1}`, 200, `"text":"a"`},
		{"unparsable text for base64", "[1,", "/v1/embeddings", `{"input":"a","encoding_format":"base64"}`, 502, "engine_failed"},
		{"unparsable text for search", "[1,", "/v1/retrieve", `{"input":"a"}`, 502, "engine_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emb := &textFake{fakeEmbedder: &fakeEmbedder{id: "emb", model: "m-emb", slots: 8}, text: tc.text}
			h := newHarness(t, Config{Retriever: fuzzIndex{}}, map[string]Member{"emb": {Embedder: emb}})
			r := h.do("POST", tc.path, tc.body, nil)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("%d %s, want %d with %s", r.status, r.body, tc.status, tc.want)
			}
			if cl := r.header.Get("Content-Length"); tc.path == "/v1/embeddings" && r.status == 200 && cl != strconv.Itoa(len(r.body)) {
				t.Errorf("Content-Length %q for %d bytes: want it set (one write, not chunks)", cl, len(r.body))
			}
		})
	}
}

// TestTextVectorsOfSplitCalls: a list sent in several engine calls keeps
// its order when the engine hands over text.
func TestTextVectorsOfSplitCalls(t *testing.T) {
	emb := &textFake{fakeEmbedder: &fakeEmbedder{id: "emb", model: "m-emb", slots: 8}}
	h := newHarness(t, Config{MaxBatch: 2}, map[string]Member{"emb": {Embedder: emb}})
	r := h.do("POST", "/v1/embeddings", `{"input":["a","bb","ccc","dddd","eeeee"]}`, nil)
	var got struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := jsonUnmarshal(r.body, &got); err != nil || r.status != 200 || len(got.Data) != 5 {
		t.Fatalf("%d %s (%v)", r.status, r.body, err)
	}
	for i, d := range got.Data {
		if d.Index != i || d.Embedding[0] != float32(i+1) {
			t.Errorf("vector %d = %+v, want the one of input %d", i, d, i)
		}
	}
	if calls := emb.callSizes(); len(calls) != 3 {
		t.Errorf("engine calls %v, want three (MaxBatch 2)", calls)
	}
}
