package tokenizer

import (
	"encoding/json"
	"slices"
	"testing"
)

// hfFromTiktoken writes the tokenizer.json of an embedded vocabulary the
// way Hugging Face's converter does: byte-level symbols, and for each
// token of two or more bytes the merge that makes it (the two parts that
// tiktoken's merging with lower ranks only leaves).
func hfFromTiktoken(t *testing.T, tk *Tiktoken, pattern string) []byte {
	t.Helper()
	type tok struct {
		s    string
		rank int
	}
	toks := make([]tok, 0, len(tk.ranks))
	for s, r := range tk.ranks {
		toks = append(toks, tok{s, r})
	}
	slices.SortFunc(toks, func(a, b tok) int { return a.rank - b.rank })
	vocab := make(map[string]int, len(toks))
	var merges [][2]string
	for _, x := range toks {
		vocab[byteLevel(x.s)] = x.rank
		if len(x.s) < 2 {
			continue
		}
		parts := mergeBelow(tk.ranks, x.s, x.rank)
		if len(parts) != 2 {
			continue // a token no merge makes (tiktoken has a few)
		}
		merges = append(merges, [2]string{byteLevel(parts[0]), byteLevel(parts[1])})
	}
	f := map[string]any{
		"normalizer": nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}}},
		"model": map[string]any{"type": "BPE", "ignore_merges": true, "vocab": vocab, "merges": merges},
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mergeBelow merges s with the ranks below limit only.
func mergeBelow(ranks map[string]int, s string, limit int) []string {
	parts := make([]string, len(s)) // bytes, not runes
	for i := 0; i < len(s); i++ {
		parts[i] = s[i : i+1]
	}
	for len(parts) > 1 {
		best, at := limit, -1
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := ranks[parts[i]+parts[i+1]]; ok && r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		parts[at] += parts[at+1]
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return parts
}

// TestHFFromTiktoken: the tokenizer.json loader (byte-level mapping,
// Split, merges by rank) gives cl100k_base's IDs for the golden corpus
// when fed cl100k_base converted to Hugging Face's format — a check that
// needs no 10 MB file in the repository.
func TestHFFromTiktoken(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a 100k-token tokenizer.json (single-goroutine code: the race detector would only slow it tenfold)")
	}
	tk := cl100k()
	hf, err := ParseHF("cl100k.json", hfFromTiktoken(t, tk, cl100kPattern))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, hf, readGolden(t), CL100K)
}

func TestHFAddedTokensAndPrefixSpace(t *testing.T) {
	// A toy vocabulary: bytes "a", "b", " ", merges a+b, Ġ+ab.
	f := `{"added_tokens":[{"id":9,"content":"<|x|>","special":true}],
	"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true},
	"model":{"type":"BPE","vocab":{"a":0,"b":1,"Ġ":2,"ab":3,"Ġab":4},"merges":["a b","Ġ ab"]}}`
	hf, err := ParseHF("toy.json", []byte(f))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"ab", []int{4}},                    // prefix space added, then merged
		{"ab ab", []int{4, 4}},              // GPT-2's split keeps " ab" together
		{"ab<|x|>ba", []int{4, 9, 2, 1, 0}}, // added token split out; "ba" has no merge
	} {
		if got := hf.Encode(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func FuzzParseHF(f *testing.F) {
	f.Add([]byte(`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`))
	f.Add([]byte(`{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"Removed"},{"type":"ByteLevel","use_regex":false}]},"model":{"type":"BPE","vocab":{"a":0},"merges":[["a","a"]]}}`))
	f.Add([]byte(`{"model":{"type":"Unigram"}}`))
	f.Add([]byte(`{"normalizer":{"type":"BertNormalizer","lowercase":true},"pre_tokenizer":{"type":"BertPreTokenizer"},"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"a":1,"##b":2}}}`))
	f.Add([]byte(`{"normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "}]},"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always"},"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["▁a",-1.5],["b",-2]]}}`))
	f.Add([]byte(`{"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"model":{"type":"BPE","byte_fallback":true,"fuse_unk":true,"unk_token":"<unk>","vocab":{"<unk>":0,"<0x41>":1,"▁":2,"a":3,"▁a":4},"merges":["▁ a"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		hf, err := ParseHF("fuzz.json", b)
		if err != nil {
			return
		}
		for _, s := range []string{"", "ab ab", "a\n\n b", "日本 😀"} {
			if n := hf.Count(s); n < 0 || n != len(hf.Encode(s)) {
				t.Fatalf("Count(%q) = %d", s, n)
			}
		}
	})
}

func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "hello world", "  \n  \n", "\xff\xfe broken", "日本語 😀 123456"} {
		f.Add(s)
	}
	tok := Default()
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if tok.Count(s) != len(ids) {
			t.Fatalf("Count and Encode disagree on %q", s)
		}
		if len(s) > 0 && len(ids) == 0 {
			t.Fatalf("%q encodes to nothing", s)
		}
	})
}
