package tokenizer

import (
	"os"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

// benchText is ~1,000 cl100k tokens of this repository's design page:
// prose with Markdown, code and tables.
func benchText(b *testing.B) string {
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		b.Fatal(err)
	}
	i := strings.Index(string(raw), "sagebench answers")
	return string(raw[i : i+4800])
}

// BenchmarkCount: tokens counted per second by each embedded vocabulary,
// and by github.com/tiktoken-go/tokenizer's own encoder for contrast
// (the memo of pre-tokens is warm after the first call, as in a run).
func BenchmarkCount(b *testing.B) {
	text := benchText(b)
	run := func(name string, count func(string) int) {
		b.Run(name, func(b *testing.B) {
			n := count(text)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				count(text)
			}
			b.ReportMetric(float64(n), "tokens/op")
		})
	}
	run("cl100k_base", Default().Count)
	o, _ := Load(O200K)
	run("o200k_base", o.Count)
	lib := codec.NewCl100kBase()
	run("tiktoken-go-codec", func(s string) int { n, _ := lib.Count(s); return n })
}

// BenchmarkStartup is the one-time cost of building an embedded
// vocabulary (the library's map, then the ranks read out of it).
func BenchmarkStartup(b *testing.B) {
	b.Run("cl100k_base", func(b *testing.B) {
		for b.Loop() {
			newTiktoken(CL100K, codec.NewCl100kBase(), cl100kPattern, 100256)
		}
	})
	b.Run("o200k_base", func(b *testing.B) {
		for b.Loop() {
			newTiktoken(O200K, codec.NewO200kBase(), o200kPattern, 199998)
		}
	})
}
