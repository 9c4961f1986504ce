package corpus

import (
	"math/rand/v2"
	"strings"
)

// vocabularySize is the number of distinct words documents are drawn from.
const vocabularySize = 4096

var (
	onsets = [...]string{"b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr", "pl"}
	nuclei = [...]string{"a", "e", "i", "o", "u", "ai", "ou", "ea"}
)

// vocabulary returns the fixed word list: pronounceable two- and
// three-syllable words, identical for every seed.
func vocabulary() []string {
	rng := rand.New(rand.NewPCG(0x5a9e, 0xbe7c))
	seen := make(map[string]bool, vocabularySize)
	words := make([]string, 0, vocabularySize)
	for len(words) < vocabularySize {
		var b strings.Builder
		for range 2 + rng.IntN(2) {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(nuclei[rng.IntN(len(nuclei))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// topicWords is how many words characterise one topic.
const topicWords = 48

// Documents generates cfg.Size documents (cfg with its defaults). Each
// document belongs to one topic and draws three quarters of its words from
// the topic's own word set and the rest from the whole vocabulary, so
// documents of a topic are close but still distinct. The same config gives
// the same documents.
func Documents(cfg Config) []string {
	cfg = cfg.WithDefaults()
	vocab := vocabulary()
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xc0de))
	topics := make([][]string, cfg.Topics)
	for t := range topics {
		topics[t] = make([]string, topicWords)
		for i := range topics[t] {
			topics[t][i] = vocab[rng.IntN(len(vocab))]
		}
	}
	docs := make([]string, cfg.Size)
	words := make([]string, cfg.DocWords)
	for d := range docs {
		topic := topics[rng.IntN(len(topics))]
		for i := range words {
			if rng.IntN(4) == 0 {
				words[i] = vocab[rng.IntN(len(vocab))]
			} else {
				words[i] = topic[rng.IntN(len(topic))]
			}
		}
		docs[d] = strings.Join(words, " ")
	}
	return docs
}
