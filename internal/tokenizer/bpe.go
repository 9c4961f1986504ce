package tokenizer

import (
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
	unk          int // −1: none
}

func newBPE(file string, m *hfModel) (*bpeModel, error) {
	switch {
	case m.Type != "BPE" && !(m.Type == "" && m.Vocab != nil):
		return nil, &UnsupportedError{File: file, What: fmt.Sprintf("model type %q", m.Type)}
	case m.Prefix != nil && *m.Prefix != "", m.Suffix != nil && *m.Suffix != "":
		return nil, &UnsupportedError{File: file, What: "a BPE continuing_subword_prefix or end_of_word_suffix"}
	case m.Dropout != nil && *m.Dropout > 0:
		return nil, &UnsupportedError{File: file, What: "BPE dropout (not deterministic)"}
	case len(m.Vocab) == 0:
		return nil, fmt.Errorf("tokenizer %s: model.vocab is empty", file)
	}
	merges, err := parseMerges(file, m.Merges)
	if err != nil {
		return nil, err
	}
	b := &bpeModel{vocab: m.Vocab, ranks: make(map[[2]string]int, len(merges)), ignoreMerges: m.IgnoreMerges, unk: -1}
	for i, pair := range merges {
		if _, dup := b.ranks[pair]; !dup {
			b.ranks[pair] = i
		}
	}
	if m.UnkToken != nil {
		if id, ok := m.Vocab[*m.UnkToken]; ok {
			b.unk = id
		}
	}
	return b, nil
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
// ignore_merges and it is in the vocabulary, else repeated merges of the
// lowest-ranked adjacent pair (leftmost first), as Hugging Face does.
func (b *bpeModel) encode(word string) []int {
	if word == "" {
		return nil
	}
	if id, ok := b.vocab[word]; ok && (b.ignoreMerges || utf8.RuneCountInString(word) == 1) {
		return []int{id}
	}
	syms := make([]string, 0, len(word))
	for i, r := range word {
		syms = append(syms, word[i:i+utf8.RuneLen(r)])
	}
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := b.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] += syms[at+1]
		syms = append(syms[:at+1], syms[at+2:]...)
	}
	ids := make([]int, 0, len(syms))
	for _, s := range syms {
		if id, ok := b.vocab[s]; ok {
			ids = append(ids, id)
		} else if b.unk >= 0 {
			ids = append(ids, b.unk)
		}
	}
	return ids
}
