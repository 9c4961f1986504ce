package tokenizer

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// wordPiece is BERT's model: greedy longest-match-first subwords, the
// non-initial ones written with a prefix (##); a word with a part no
// subword covers, or longer than maxChars, is the unk token.
type wordPiece struct {
	vocab    map[string]int
	prefix   string
	unk      int
	maxChars int
}

func newWordPiece(file string, m *hfModel) (*wordPiece, error) {
	vocab, err := vocabMap(file, m.Vocab)
	if err != nil {
		return nil, err
	}
	w := &wordPiece{vocab: vocab, prefix: "##", maxChars: 100}
	if m.Prefix != nil {
		w.prefix = *m.Prefix
	}
	if m.MaxChars != nil {
		w.maxChars = *m.MaxChars
	}
	unk := "[UNK]"
	if m.UnkToken != nil {
		unk = *m.UnkToken
	}
	id, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("tokenizer %s: WordPiece unk_token %q is not in the vocabulary", file, unk)
	}
	w.unk = id
	return w, nil
}

func (w *wordPiece) encode(word string) []int {
	if utf8.RuneCountInString(word) > w.maxChars {
		return []int{w.unk}
	}
	var ids []int
	for start := 0; start < len(word); {
		end, id := len(word), -1
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = w.prefix + sub
			}
			if v, ok := w.vocab[sub]; ok {
				id = v
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if id < 0 {
			return []int{w.unk}
		}
		ids = append(ids, id)
		start = end
	}
	return ids
}

// unigram is SentencePiece's Unigram model: the segmentation of highest
// total score (Viterbi), a character no piece covers scored as the unk
// token (min score − 10), consecutive unknowns fused into one.
type unigram struct {
	vocab    map[string]int
	scores   []float64
	unk      int
	unkScore float64
	maxLen   int // longest piece, in bytes
	bytes    bool
}

func newUnigram(file string, m *hfModel) (*unigram, error) {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(m.Vocab, &raw); err != nil {
		return nil, fmt.Errorf("tokenizer %s: Unigram vocab: want [[piece, score], …]: %w", file, err)
	}
	u := &unigram{vocab: make(map[string]int, len(raw)), scores: make([]float64, len(raw)), unk: -1, bytes: m.ByteFallback}
	minScore := math.Inf(1)
	for i, r := range raw {
		var p string
		sc, err := serdeFloat(string(r[1]))
		if json.Unmarshal(r[0], &p) != nil || err != nil {
			return nil, fmt.Errorf("tokenizer %s: Unigram vocab[%d]: want [piece, score]", file, i)
		}
		if _, dup := u.vocab[p]; !dup {
			u.vocab[p] = i
		}
		u.scores[i] = sc
		u.maxLen = max(u.maxLen, len(p))
		minScore = min(minScore, sc)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("tokenizer %s: model.vocab is empty", file)
	}
	if m.UnkID != nil {
		if *m.UnkID < 0 || *m.UnkID >= len(raw) {
			return nil, fmt.Errorf("tokenizer %s: Unigram unk_id %d is outside the vocabulary", file, *m.UnkID)
		}
		u.unk = *m.UnkID
	}
	u.unkScore = minScore - 10
	return u, nil
}

type lattice struct {
	score float64
	start int // −1: unreached
	id    int
}

// encode is Hugging Face's Unigram::encode_optimized: the best path over
// the pieces that start at each character, ties to the shorter piece.
func (u *unigram) encode(s string) []int {
	if s == "" {
		return nil
	}
	best := make([]lattice, len(s)+1)
	for i := range best {
		best[i].start = -1
	}
	best[0].start = 0
	for at := 0; at < len(s); {
		_, size := utf8.DecodeRuneInString(s[at:])
		base, single := best[at].score, false
		for end := at + size; end <= len(s) && end-at <= u.maxLen; {
			if id, ok := u.vocab[s[at:end]]; ok {
				if sc := base + u.scores[id]; best[end].start < 0 || sc > best[end].score {
					best[end] = lattice{sc, at, id}
				}
				single = single || end-at == size
			}
			if end == len(s) {
				break
			}
			_, n := utf8.DecodeRuneInString(s[end:])
			end += n
		}
		if !single && u.unk >= 0 {
			if sc := base + u.unkScore; best[at+size].start < 0 || sc > best[at+size].score {
				best[at+size] = lattice{sc, at, u.unk}
			}
		}
		at += size
	}
	return u.backtrack(s, best)
}

// backtrack reads the pieces off the lattice, fusing consecutive unks.
func (u *unigram) backtrack(s string, best []lattice) []int {
	var pieces []string
	fused := ""
	for end := len(s); end > 0; {
		n := best[end]
		if n.start < 0 {
			return []int{u.unk} // unreachable without an unk token
		}
		if u.unk >= 0 && n.id == u.unk {
			fused = s[n.start:end] + fused
		} else {
			if fused != "" {
				pieces, fused = append(pieces, fused), ""
			}
			pieces = append(pieces, s[n.start:end])
		}
		end = n.start
	}
	if fused != "" {
		pieces = append(pieces, fused)
	}
	ids := make([]int, 0, len(pieces))
	for i := len(pieces) - 1; i >= 0; i-- {
		ids = u.appendPiece(ids, pieces[i])
	}
	return ids
}

func (u *unigram) appendPiece(ids []int, p string) []int {
	if id, ok := u.vocab[p]; ok {
		return append(ids, id)
	}
	if u.bytes {
		var b strings.Builder
		for j := 0; j < len(p); j++ {
			b.Reset()
			fmt.Fprintf(&b, "<0x%02X>", p[j])
			if id, ok := u.vocab[b.String()]; ok {
				ids = append(ids, id)
			} else {
				return append(ids, u.unk)
			}
		}
		return ids
	}
	return append(ids, u.unk)
}

// serdeFloat parses a JSON number as Rust's serde_json does by default,
// which is how tokenizers reads Unigram scores: the decimal significand
// rounded to a float64, then one multiplication or division by a power
// of ten. That can be one unit in the last place off the correctly
// rounded value, and Unigram's near-ties between two segmentations are
// decided by that unit.
func serdeFloat(s string) (float64, error) {
	t, neg := strings.CutPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	e := -len(frac)
	if hasExp {
		n, err := strconv.Atoi(exp)
		if err != nil {
			return 0, err
		}
		e += n
	}
	sig, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || e < -308 || e > 308 {
		return strconv.ParseFloat(s, 64) // off the fast path: the exact value
	}
	pow, err := strconv.ParseFloat("1e"+strconv.Itoa(max(e, -e)), 64)
	if err != nil {
		return 0, err
	}
	f := float64(sig)
	if e >= 0 {
		f *= pow
	} else {
		f /= pow
	}
	if neg {
		f = -f
	}
	return f, nil
}
