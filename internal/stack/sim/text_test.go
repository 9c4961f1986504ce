package sim

import (
	"slices"
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"spaces only", " \t\n ", 0},
		{"one word", "hello", 1},
		{"words and whitespace", "  the quick\tbrown\nfox ", 4},
		{"exactly eight runes", "abcdefgh", 1},
		{"nine runes", "abcdefghi", 2},
		{"twenty runes", "internationalisation", 3},
		{"multibyte runes count once", "ééééééééé", 2},
		{"punctuation stays with its word", "hi, there!", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CountTokens(tt.text); got != tt.want {
				t.Errorf("CountTokens(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestForEachTokenSplitsLongWords(t *testing.T) {
	var got []string
	forEachToken("a internationalisation b", func(tok string) { got = append(got, tok) })
	want := []string{"a", "internat", "ionalisa", "tion", "b"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

func TestBlockHashesChainPrefixes(t *testing.T) {
	a := blockHashes(words("s", 32)+words("x", 20), 16)
	b := blockHashes(words("s", 16)+words("y", 40), 16)
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("block counts %d, %d, want 3 and 3", len(a), len(b))
	}
	if a[0] != b[0] || a[1] == b[1] || a[2] == b[2] {
		t.Error("hashes must agree exactly on the shared first block and differ after")
	}
	c := newPrefixCache(2)
	c.insert(a)
	if c.len() != 2 || c.match(a) != 0 {
		t.Errorf("LRU bound 2: len %d; evicting block 0 breaks the chain, match %d", c.len(), c.match(a))
	}
}

func TestTokenTextsAreVocabularyWords(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(tokenText(42, i))
	}
	if n := CountTokens(b.String()); n != 100 {
		t.Errorf("100 generated tokens count as %d", n)
	}
	for _, w := range outputWords {
		if len([]rune(w)) > runesPerToken {
			t.Errorf("vocabulary word %q is longer than one token", w)
		}
	}
}
