package sim

import (
	"unicode"
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
