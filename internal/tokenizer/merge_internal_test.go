package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestQueuedMergeIsTiktoksMerge: the O(n log n) merge of long pieces gives
// the ids of the scan that defines tiktoken's order (lowest rank, then
// leftmost), on runs of letters, digits, bytes and text of many scripts.
func TestQueuedMergeIsTiktoksMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	alphabets := map[string][]rune{
		"lowercase": []rune("abcdefghijklmnopqrstuvwxyz"),
		"few":       []rune("aab"),
		"mixed":     []rune("the quick brown fox JUMPS 0123 é中文😀\t\n'"),
		"bytes":     []rune("\x00\x01\xff ~!@#$%^&*()"),
	}
	for _, name := range []string{"cl100k_base", "o200k_base"} {
		tk, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		tt := tk.(*Tiktoken)
		for an, al := range alphabets {
			for i := range 60 {
				var b strings.Builder
				for range longPiece + r.IntN(600) {
					b.WriteRune(al[r.IntN(len(al))])
				}
				piece := b.String()
				if got, want := tt.encodeQueued(piece), tt.encodeScan(piece); !slices.Equal(got, want) {
					t.Fatalf("%s %s #%d: queued %v, scan %v", name, an, i, got, want)
				}
			}
		}
	}
}

// BenchmarkLongPiece: one 16 KiB run of letters, the piece a dataset value
// without spaces makes (the scan took ~5 s; the queue milliseconds).
func BenchmarkLongPiece(b *testing.B) {
	tk, err := Load("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	var sb strings.Builder
	for sb.Len() < 16<<10 {
		sb.WriteByte(byte('a' + r.IntN(26)))
	}
	piece := sb.String()
	for b.Loop() {
		tk.(*Tiktoken).encode(piece)
	}
}
