package tokenizer

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// bpeModel is a BPE vocabulary with its merge ranks.
type bpeModel struct {
	vocab        map[string]int
	ranks        map[[2]string]int
	ignoreMerges bool
	byteFallback bool
	fuseUnk      bool
	unk          string // "": none
}

func newBPE(file string, m *hfModel) (*bpeModel, error) {
	switch {
	case m.Type != "BPE" && m.Type != "":
		return nil, &UnsupportedError{File: file, What: fmt.Sprintf("model type %q", m.Type)}
	case m.Prefix != nil && *m.Prefix != "", m.Suffix != nil && *m.Suffix != "":
		return nil, &UnsupportedError{File: file, What: "a BPE continuing_subword_prefix or end_of_word_suffix"}
	case m.Dropout != nil && *m.Dropout > 0:
		return nil, &UnsupportedError{File: file, What: "BPE dropout (not deterministic)"}
	}
	vocab, err := vocabMap(file, m.Vocab)
	if err != nil {
		return nil, err
	}
	merges, err := parseMerges(file, m.Merges)
	if err != nil {
		return nil, err
	}
	b := &bpeModel{vocab: vocab, ranks: make(map[[2]string]int, len(merges)), ignoreMerges: m.IgnoreMerges,
		byteFallback: m.ByteFallback, fuseUnk: m.FuseUnk}
	for i, pair := range merges {
		if _, dup := b.ranks[pair]; !dup {
			b.ranks[pair] = i
		}
	}
	if m.UnkToken != nil {
		if _, ok := vocab[*m.UnkToken]; ok {
			b.unk = *m.UnkToken
		}
	}
	return b, nil
}

// vocabMap decodes a {token: id} vocabulary.
func vocabMap(file string, raw json.RawMessage) (map[string]int, error) {
	var v map[string]int
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("tokenizer %s: model.vocab: want {token: id}: %w", file, err)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("tokenizer %s: model.vocab is empty", file)
	}
	return v, nil
}

// parseMerges reads merges as "a b" strings or as [a, b] pairs.
func parseMerges(file string, raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		return pairs, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, fmt.Errorf("tokenizer %s: model.merges: want [\"a b\", …] or [[\"a\", \"b\"], …]: %w", file, err)
	}
	pairs = make([][2]string, len(lines))
	for i, l := range lines {
		a, b, ok := strings.Cut(l, " ")
		if !ok {
			return nil, fmt.Errorf("tokenizer %s: model.merges[%d] %q: want two symbols separated by a space", file, i, l)
		}
		pairs[i] = [2]string{a, b}
	}
	return pairs, nil
}

// encode returns the IDs of one pre-token: the whole word when
// ignore_merges and it is in the vocabulary, else its characters (bytes
// <0xXX> for one not in the vocabulary with byte_fallback, else the unk
// token, consecutive ones fused with fuse_unk) merged lowest rank first,
// leftmost first, as Hugging Face does.
func (b *bpeModel) encode(word string) []int {
	if word == "" {
		return nil
	}
	if id, ok := b.vocab[word]; ok && (b.ignoreMerges || utf8.RuneCountInString(word) == 1) {
		return []int{id}
	}
	syms := b.merge(b.symbols(word))
	ids := make([]int, 0, len(syms))
	for _, s := range syms {
		if id, ok := b.vocab[s]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// symbols are the initial symbols of word.
func (b *bpeModel) symbols(word string) []string {
	syms := make([]string, 0, len(word))
	unk := false // the last symbol is a pending unk
	for i, r := range word {
		c := word[i : i+utf8.RuneLen(r)]
		if _, ok := b.vocab[c]; ok {
			syms, unk = append(syms, c), false
			continue
		}
		if b.byteFallback && b.hasBytes(c) {
			for j := 0; j < len(c); j++ {
				syms = append(syms, fmt.Sprintf("<0x%02X>", c[j]))
			}
			continue
		}
		if b.unk != "" && !(unk && b.fuseUnk) {
			syms, unk = append(syms, b.unk), true
		}
	}
	return syms
}

func (b *bpeModel) hasBytes(c string) bool {
	for j := 0; j < len(c); j++ {
		if _, ok := b.vocab[fmt.Sprintf("<0x%02X>", c[j])]; !ok {
			return false
		}
	}
	return true
}

// merge applies the merges to syms with a priority queue of (rank,
// position), as Hugging Face's Word::merge_all: O(n log n) on the long
// words of a tokenizer without a pre-tokenizer.
func (b *bpeModel) merge(syms []string) []string {
	if len(syms) < 2 {
		return syms
	}
	next, prev := make([]int, len(syms)), make([]int, len(syms))
	for i := range syms {
		next[i], prev[i] = i+1, i-1
	}
	next[len(syms)-1] = -1
	q := &rankQueue[mergeAt]{}
	for i := 0; i+1 < len(syms); i++ {
		if r, ok := b.ranks[[2]string{syms[i], syms[i+1]}]; ok {
			q.items = append(q.items, mergeAt{r, i, syms[i] + syms[i+1]})
		}
	}
	heap.Init(q)
	for q.Len() > 0 {
		top := heap.Pop(q).(mergeAt)
		n := next[top.pos]
		if syms[top.pos] == "" || n < 0 || syms[top.pos]+syms[n] != top.merged {
			continue // stale
		}
		if _, ok := b.ranks[[2]string{syms[top.pos], syms[n]}]; !ok {
			continue // the same text, made of another pair
		}
		syms[top.pos], syms[n] = top.merged, ""
		next[top.pos] = next[n]
		if next[n] >= 0 {
			prev[next[n]] = top.pos
		}
		if p := prev[top.pos]; p >= 0 {
			if r, ok := b.ranks[[2]string{syms[p], syms[top.pos]}]; ok {
				heap.Push(q, mergeAt{r, p, syms[p] + syms[top.pos]})
			}
		}
		if nn := next[top.pos]; nn >= 0 {
			if r, ok := b.ranks[[2]string{syms[top.pos], syms[nn]}]; ok {
				heap.Push(q, mergeAt{r, top.pos, syms[top.pos] + syms[nn]})
			}
		}
	}
	out := syms[:0]
	for _, s := range syms {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

type mergeAt struct {
	rank, pos int
	merged    string
}

func (m mergeAt) order() (int, int) { return m.rank, m.pos }

// ranked is a candidate merge ordered by its rank, then its position.
type ranked interface{ order() (rank, pos int) }

// rankQueue is a container/heap of candidate merges, lowest rank first,
// the leftmost of equal ranks first.
type rankQueue[T ranked] struct{ items []T }

func (q *rankQueue[T]) Len() int { return len(q.items) }
func (q *rankQueue[T]) Less(i, j int) bool {
	ra, pa := q.items[i].order()
	rb, pb := q.items[j].order()
	return ra < rb || (ra == rb && pa < pb)
}
func (q *rankQueue[T]) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *rankQueue[T]) Push(x any)    { q.items = append(q.items, x.(T)) }
func (q *rankQueue[T]) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}
