package corpus

import (
	"math"
	"unicode"
	"unicode/utf8"
)

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

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

// splitmix64 advances *s and returns the next pseudo-random value.
func splitmix64(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
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
