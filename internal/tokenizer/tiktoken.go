package tokenizer

import (
	"math"

	"github.com/tiktoken-go/tokenizer/codec"
)

// The split patterns of tiktoken's cl100k_base and o200k_base, in the
// form without possessive quantifiers (as Llama 3's tokenizer.json
// carries cl100k's). github.com/tiktoken-go/tokenizer supplies the
// vocabularies; its own pre-tokenizer splits runs of blank lines and
// spaces differently from tiktoken ("  \n  \n"), so the pieces are cut
// here, by the interpreted regexp2 that also serves tokenizer.json.
const (
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// Tiktoken is an embedded tiktoken vocabulary: byte-pair ranks, merged
// lowest rank first as tiktoken does.
type Tiktoken struct {
	core
	ranks map[string]int
}

var _ Tokenizer = (*Tiktoken)(nil)

// newTiktoken reads the ranks of ids [0, last] out of c.
func newTiktoken(name string, c *codec.Codec, pattern string, last int) *Tiktoken {
	t := &Tiktoken{core: core{name: name, memo: map[string][]int{}}, ranks: make(map[string]int, last+1)}
	for id := 0; id <= last; id++ {
		if s, err := c.Decode([]uint{uint(id)}); err == nil {
			t.ranks[s] = id
		}
	}
	re, err := compile(name, pattern)
	if err != nil {
		panic(err) // a constant pattern: TestBuiltinsMatchTiktoken
	}
	t.pre = []preStep{{re: re}}
	t.word = t.encode
	return t
}

// encode is tiktoken's byte-pair merge of one piece.
func (t *Tiktoken) encode(piece string) []int {
	if id, ok := t.ranks[piece]; ok {
		return []int{id}
	}
	bounds := make([]int, len(piece)+1) // part i is piece[bounds[i]:bounds[i+1]]
	for i := range bounds {
		bounds[i] = i
	}
	for len(bounds) > 2 {
		best, at := math.MaxInt, -1
		for i := 0; i+2 < len(bounds); i++ {
			if r, ok := t.ranks[piece[bounds[i]:bounds[i+2]]]; ok && r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		bounds = append(bounds[:at+1], bounds[at+2:]...)
	}
	ids := make([]int, 0, len(bounds)-1)
	for i := 0; i+1 < len(bounds); i++ {
		ids = append(ids, t.ranks[piece[bounds[i]:bounds[i+1]]])
	}
	return ids
}
