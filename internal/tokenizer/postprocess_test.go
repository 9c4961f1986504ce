package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// postCases are post_processors as Hugging Face's tokenizers 0.22.1
// serializes them (BERT's, RoBERTa's, bge's TemplateProcessing, Llama 3's
// ByteLevel + TemplateProcessing), put on the parity
// models, with the IDs each adds around a single sequence.
var postCases = []struct {
	name, model, post string
	prefix, suffix    []int
}{
	{"none", "wordpiece", `null`, nil, nil},
	{"xlmr_as_converted", "precompiled", ``, []int{0}, []int{2}}, // the file's own: transformers' XLM-R converter
	{"bert", "wordpiece", `{"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}`, []int{2}, []int{3}},
	{"roberta", "bytebpe", `{"type": "RobertaProcessing", "sep": ["</s>", 3], "cls": ["<s>", 2], "trim_offsets": true, "add_prefix_space": true}`, []int{2}, []int{3}},
	{"bge_template", "wordpiece", `{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}], "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}], "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}}`, []int{2}, []int{3}},
	{"llama3_bos", "bytebpe", `{"type": "Sequence", "processors": [{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}, {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [5], "tokens": ["<|begin_of_text|>"]}}}]}`, []int{5}, nil},
}

// writePostVariant writes the parity model with post_processor post into
// a temporary tokenizer.json and returns its path.
func writePostVariant(t *testing.T, model, post string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "parity", model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if post != "" { // "" keeps the file's own
		f["post_processor"] = json.RawMessage(post)
	}
	if b, err = json.Marshal(f); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), model+".json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPostProcessor: the special tokens each post-processor adds around
// one sequence, in EncodeWithSpecialTokens and CountWithSpecialTokens;
// Encode and Count stay the text's alone (what a chat prompt is counted
// with).
func TestPostProcessor(t *testing.T) {
	for _, tc := range postCases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Load(writePostVariant(t, tc.model, tc.post))
			if err != nil {
				t.Fatal(err)
			}
			hf := tok.(*HF)
			for _, text := range []string{"", "hello world", "Zürich 42 straße"} {
				plain := tok.Encode(text)
				want := slices.Concat(tc.prefix, plain, tc.suffix)
				if got := hf.EncodeWithSpecialTokens(text); !slices.Equal(got, want) {
					t.Errorf("EncodeWithSpecialTokens(%q) = %v, want %v", text, got, want)
				}
				if got := CountWithSpecialTokens(tok, text); got != len(want) {
					t.Errorf("CountWithSpecialTokens(%q) = %d, want %d", text, got, len(want))
				}
				if tok.Count(text) != len(plain) {
					t.Errorf("Count(%q) = %d, want %d: the text's alone", text, tok.Count(text), len(plain))
				}
			}
		})
	}
}

// TestCountWithSpecialTokensTiktoken: an embedded vocabulary adds nothing.
func TestCountWithSpecialTokensTiktoken(t *testing.T) {
	if got, want := CountWithSpecialTokens(Default(), "hello world"), Default().Count("hello world"); got != want {
		t.Fatalf("cl100k_base: %d, want %d", got, want)
	}
}

func TestPostProcessorRefused(t *testing.T) {
	for _, tc := range []struct{ name, post string }{
		{"unknown type", `{"type": "Whisper"}`},
		{"bert without ids", `{"type": "BertProcessing", "sep": ["[SEP]"], "cls": ["[CLS]", 2]}`},
		{"template without $A", `{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}], "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}}}`},
		{"template with $B", `{"type": "TemplateProcessing", "single": [{"Sequence": {"id": "B", "type_id": 0}}], "special_tokens": {}}`},
		{"two adders in a sequence", `{"type": "Sequence", "processors": [{"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}, {"type": "ByteLevel"}, {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}]}`},
		{"undefined special token", `{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[X]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writePostVariant(t, "wordpiece", tc.post))
			var u *UnsupportedError
			if !errors.As(err, &u) {
				t.Fatalf("Load: %v, want an *UnsupportedError", err)
			}
		})
	}
}

// TestPostProcessorLive: every post-processor of postCases on 3,000
// fresh strings and the empty one, against Hugging Face's tokenizers'
// encode(text, add_special_tokens=True) — what HF TEI and vLLM count for
// an embedding input. Skips without the virtualenv as TestParityLive.
func TestPostProcessorLive(t *testing.T) {
	py := venvPython(t)
	script := filepath.Join("testdata", "parity", "gen.py")
	corpus := append([]byte(`{"text": ""}`+"\n"), runPy(t, nil, py, script, "corpus", "20261207", "3000")...)
	var texts []string
	for _, l := range bytes.Split(bytes.TrimSpace(corpus), []byte("\n")) {
		var x struct{ Text string }
		if err := json.Unmarshal(l, &x); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, x.Text)
	}
	for _, tc := range postCases {
		t.Run(tc.name, func(t *testing.T) {
			path := writePostVariant(t, tc.model, tc.post)
			tok, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			out := runPy(t, corpus, py, script, "encode-special", path)
			lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
			if len(lines) != len(texts) {
				t.Fatalf("%d lines from tokenizers for %d texts", len(lines), len(texts))
			}
			bad := 0
			for i, l := range lines {
				var want []int
				if err := json.Unmarshal(l, &want); err != nil {
					t.Fatal(err)
				}
				got := tok.(*HF).EncodeWithSpecialTokens(texts[i])
				if !slices.Equal(got, want) || CountWithSpecialTokens(tok, texts[i]) != len(want) {
					if bad++; bad <= 5 {
						t.Errorf("text %d %q:\n got %v\nwant %v", i, texts[i], got, want)
					}
				}
			}
			t.Logf("%s: %d of %d strings differ", tc.name, bad, len(texts))
		})
	}
}
