package tokenizer

import (
	"container/heap"
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

// longPiece is the length from which encode merges through a priority
// queue: the scan below is quadratic, and one long run of letters (a
// dataset value without spaces) would cost seconds per 16 KB.
const longPiece = 64

// encode is tiktoken's byte-pair merge of one piece: repeatedly the
// adjacent pair whose bytes have the lowest rank, the leftmost of equal
// ranks.
func (t *Tiktoken) encode(piece string) []int {
	if id, ok := t.ranks[piece]; ok {
		return []int{id}
	}
	if len(piece) >= longPiece {
		return t.encodeQueued(piece)
	}
	return t.encodeScan(piece)
}

// encodeScan is the merge by a scan of every pair per step, fastest for
// the short pieces that are nearly all of them.
func (t *Tiktoken) encodeScan(piece string) []int {
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

// encodeQueued is the same merge in O(n log n): candidate pairs wait in a
// queue ordered by (rank, start byte), and an entry whose two parts no
// longer span its bytes is stale. A pair's rank depends only on the bytes
// it spans, so any two adjacent parts spanning them merge alike.
func (t *Tiktoken) encodeQueued(piece string) []int {
	n := len(piece)
	next, prev := make([]int, n), make([]int, n) // by a part's start byte
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	q := &rankQueue[span]{}
	push := func(from, to int) {
		if r, ok := t.ranks[piece[from:to]]; ok {
			heap.Push(q, span{rank: r, from: from, to: to})
		}
	}
	for i := 0; i+1 < n; i++ {
		if r, ok := t.ranks[piece[i:i+2]]; ok {
			q.items = append(q.items, span{rank: r, from: i, to: i + 2})
		}
	}
	heap.Init(q)
	for q.Len() > 0 {
		s := heap.Pop(q).(span)
		mid := next[s.from]
		if prev[s.from] == -2 || mid >= n || next[mid] != s.to {
			continue // stale: a part it spanned merged otherwise
		}
		prev[mid] = -2 // merged into s.from
		next[s.from] = s.to
		if s.to < n {
			prev[s.to] = s.from
			push(s.from, next[s.to])
		}
		if p := prev[s.from]; p >= 0 {
			push(p, s.to)
		}
	}
	var ids []int
	for i := 0; i < n; i = next[i] {
		ids = append(ids, t.ranks[piece[i:next[i]]])
	}
	return ids
}

// span is a candidate merge of the parts covering piece[from:to].
type span struct{ rank, from, to int }

func (s span) order() (int, int) { return s.rank, s.from }
