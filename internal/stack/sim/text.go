package sim

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// runesPerToken is how many runes of one word make one simulated token.
const runesPerToken = 8

// CountTokens is the simulated tokenizer's count for text: every
// whitespace-separated word is one token, and a word longer than 8 runes
// is one token per started 8 runes (so "internationalisation", 20 runes,
// is 3). It is deterministic and allocation-free. It undercounts real BPE
// tokenizers by roughly a quarter on English prose; the timing profiles
// are expressed in these tokens.
func CountTokens(text string) int {
	n := 0
	forEachToken(text, func(string) { n++ })
	return n
}

// forEachToken calls fn with each simulated token of text, in order.
func forEachToken(text string, fn func(tok string)) {
	start, runes := -1, 0
	for i, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				fn(text[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start, runes = i, 0
		}
		if runes == runesPerToken {
			fn(text[start:i])
			start, runes = i, 0
		}
		runes++
	}
	if start >= 0 {
		fn(text[start:])
	}
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// HashText is a stable 64-bit FNV-1a hash of text.
func HashText(text string) uint64 { return fnvString(fnvOffset, text) }

// splitmix64 advances *s and returns the next pseudo-random value.
func splitmix64(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Vector returns the deterministic unit vector of text in dim dimensions,
// by feature hashing: the text is split into words (runs of letters and
// digits, lower-cased), each word seeds a pseudo-random vector with
// components uniform in [-1, 1), and the sum is normalised. The same text
// always gives the same vector and texts sharing words are close (cosine
// similarity grows with the share of common words). A text without words
// gets the fixed vector of the empty word. dim < 1 returns nil.
func Vector(text string, dim int) []float32 {
	if dim < 1 {
		return nil
	}
	acc := make([]float64, dim)
	words := 0
	h, inWord := uint64(fnvOffset), false
	flush := func() {
		addWordVector(acc, h)
		words++
		h, inWord = fnvOffset, false
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			var buf [utf8.UTFMax]byte
			n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
			for _, b := range buf[:n] {
				h = (h ^ uint64(b)) * fnvPrime
			}
			inWord = true
		} else if inWord {
			flush()
		}
	}
	if inWord || words == 0 {
		flush()
	}
	return normalise(acc)
}

func addWordVector(acc []float64, seed uint64) {
	s := seed
	for i := range acc {
		// 53 random bits -> [0,1) -> [-1,1)
		acc[i] += float64(splitmix64(&s)>>11)/(1<<53)*2 - 1
	}
}

func normalise(acc []float64) []float32 {
	var sum float64
	for _, v := range acc {
		sum += v * v
	}
	norm := math.Sqrt(sum)
	out := make([]float32, len(acc))
	if norm == 0 {
		out[0] = 1
		return out
	}
	for i, v := range acc {
		out[i] = float32(v / norm)
	}
	return out
}
