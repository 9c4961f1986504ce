package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"testing"
)

// TestPrecompiledNormalizer: the normalizers of testdata/parity/
// precompiled.json (SentencePiece's nmt_nfkc charsmap as transformers
// converts XLM-R's, then Strip and Replace) turn each string into what
// tokenizers 0.22.1's normalize_str gave: compatibility forms, ligatures,
// full-width letters, control characters dropped, blanks to spaces, a
// combining accent composed as a whole grapheme, an emoji sequence kept.
func TestPrecompiledNormalizer(t *testing.T) {
	tok := loadParity(t, "precompiled").(*HF)
	for _, tc := range []struct{ name, in, want string }{
		{"ligature", "\ufb01ne", "fine"},
		{"full width", "\uff21\uff22\uff23\uff11\uff12\uff13", "ABC123"},
		{"circled digits", "\u2460\u2461", "12"},
		{"combining accents", "e\u0301te\u0301", "\u00e9t\u00e9"},
		{"precomposed", "\u00c5", "\u00c5"},
		{"blanks", "\u3000x\u00a0y", " x y"},
		{"half-width kana", "\uff76\uff9e", "\u30ab\u3099"},
		{"trade mark", "\u2122", "TM"},
		{"math bold", "\U0001d400\U0001d401", "AB"},
		{"zero width space", "\u200bzero", " zero"},
		{"tab and newlines", "a\tb\nc\r\nd", "a b c d"},
		{"emoji sequence", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f468\u200d\U0001f469\u200d\U0001f467"},
		{"control characters", "\x7f\x01q", "q"},
		{"digraph", "\u01c6", "d\u017e"},
		{"hangul", "\ud55c\uad6d\uc5b4", "\ud55c\uad6d\uc5b4"},
		{"roman numeral", "\u216b", "XII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			for _, f := range tok.norm {
				got = f(got)
			}
			if got != tc.want {
				t.Errorf("normalized %q to %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestPrecompiledBrokenTrie: a charsmap whose trie points past its end
// (a hostile or damaged file) matches nothing instead of panicking.
func TestPrecompiledBrokenTrie(t *testing.T) {
	units := []uint32{0xFFFFFC00, 0x61, 0x7FFFFFFF} // offsets far out of the array
	b := binary.LittleEndian.AppendUint32(nil, uint32(4*len(units)))
	for _, u := range units {
		b = binary.LittleEndian.AppendUint32(b, u)
	}
	f, err := newPrecompiled("broken.json", base64.StdEncoding.EncodeToString(append(b, "x\x00"...)))
	if err != nil {
		t.Fatal(err)
	}
	if got := f("abc\u00e9"); got != "abc\u00e9" {
		t.Fatalf("normalized to %q, want the text unchanged", got)
	}
}

func FuzzPrecompiled(f *testing.F) {
	f.Add([]byte{8, 0, 0, 0, 0, 4, 0, 0, 0x61, 1, 0, 0}, "abc")
	f.Add([]byte{4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'x', 0}, "\u00e9\U0001f600")
	f.Fuzz(func(t *testing.T, charsmap []byte, text string) {
		fn, err := newPrecompiled("fuzz.json", base64.StdEncoding.EncodeToString(charsmap))
		if err != nil {
			return
		}
		_ = fn(text)
	})
}
