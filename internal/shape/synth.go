package shape

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// candidates are the words prompts are made of, each written with a
// leading space; NewSynth keeps those that are one token.
var candidates = strings.Fields(`the of and to in is for on with as by at from that this it be are was
were not or but have has had will would can could should may might must do does did make made
model system request token engine batch queue cache latency throughput policy tenant priority
service level objective schedule gateway router stream vector index retrieve generate
answer question context document summary benchmark load burst steady fair share deadline
river mountain forest ocean desert valley island garden harbor bridge morning evening winter
summer spring autumn season moment minute hour letter number reason example pattern method
problem theory light sound colour shape motion energy power force field wave people friend
family teacher student doctor worker writer reader player city street house school market
office station village country world good great little old young right big same able last
first new long short high low early late fast slow large small simple stable heavy clear
exact careful measure compare observe predict compute store fetch return accept reject
because while where after before under between without within through about over into
table record event signal thread process network client result data value order state
point graph layer weight input output source target limit budget rate window sample
median mean error retry timeout prefix prompt decode page block slot step chunk node`)

// poolTokens is the length of the memoized text, in tokens: prompts are
// windows of it, so two prompts share a prefix only when they start at
// the same token (about 1 in 130,000 for short prompts).
const poolTokens = 1 << 17

// Synth synthesizes prompts of an exact token count for one tokenizer.
// Its text is built once (a few ms) and read-only afterwards: Prompt
// returns a substring of it, so it is cheap and safe for concurrent use.
type Synth struct {
	tok   tokenizer.Tokenizer
	words []string // one-token pieces, leading space included
	text  string
	offs  []int32 // offs[i] is where token i of text starts; offs[poolTokens] = len(text)
	tpl   *chattemplate.Template
	// server, for tokenizer: server, knows the target's template tokens
	// per message structure: chat prompts are fitted to its counts.
	server calibrated
}

// NewSynth builds the memoized text for tok. It fails when fewer than 64
// candidate words are single tokens of tok, or when tok does not count a
// run of them additively (a tokenizer that merges across spaces).
func NewSynth(tok tokenizer.Tokenizer) (*Synth, error) {
	s := &Synth{tok: tok}
	if c, ok := tok.(calibrated); ok { // the server's words: one token each in running text
		s.words, s.server = c.Words(), c
	} else {
		for _, w := range candidates {
			if tok.Count(" "+w) == 1 {
				s.words = append(s.words, " "+w)
			}
		}
	}
	if len(s.words) < 64 {
		return nil, fmt.Errorf("tokenizer %s: only %d of %d common English words are one token; prompts cannot be synthesized with it", tok.Name(), len(s.words), len(candidates))
	}
	rng := rand.New(rand.NewPCG(0x73796e7468, 1))
	var b strings.Builder
	s.offs = make([]int32, poolTokens+1)
	for i := range poolTokens {
		s.offs[i] = int32(b.Len())
		b.WriteString(s.words[rng.IntN(len(s.words))])
	}
	s.offs[poolTokens] = int32(b.Len())
	s.text = b.String()
	if sample := s.text[:s.offs[4096]]; tok.Count(sample) != 4096 {
		return nil, fmt.Errorf("tokenizer %s: a run of 4096 one-token words counts %d tokens; prompts cannot be synthesized with it", tok.Name(), tok.Count(sample))
	}
	return s, nil
}

// Tokenizer is the tokenizer the prompts are exact for.
func (s *Synth) Tokenizer() tokenizer.Tokenizer { return s.tok }

// Prompt returns n tokens of text chosen by seed: the same seed and n
// give the same text.
func (s *Synth) Prompt(seed uint64, n int) string {
	if n <= 0 {
		return ""
	}
	if n > poolTokens {
		return s.long(seed, n)
	}
	start := int(mix(seed) % uint64(poolTokens-n+1))
	return s.text[s.offs[start]:s.offs[start+n]]
}

// Fit returns text of exactly n tokens that begins with as many of words
// (joined by spaces, in order) as fit, filled out with the memoized
// one-token words chosen by seed: a question made of a document's words
// at a token length. Should the tokenizer not count the joined words
// additively, it returns Prompt(seed, n), which is exact by construction,
// and ok false: the text holds none of words.
func (s *Synth) Fit(words []string, n int, seed uint64) (text string, ok bool) {
	if n <= 0 {
		return "", true
	}
	var b strings.Builder
	used := 0
	for _, w := range words {
		piece := w
		if b.Len() > 0 {
			piece = " " + w
		}
		c := s.tok.Count(piece)
		if used+c > n {
			break
		}
		b.WriteString(piece)
		used += c
	}
	b.WriteString(s.Prompt(seed, n-used))
	if text := b.String(); s.tok.Count(text) == n {
		return text, true
	}
	return s.Prompt(seed, n), false
}

// long concatenates windows for a prompt longer than the pool.
func (s *Synth) long(seed uint64, n int) string {
	var b strings.Builder
	b.Grow(n * 6)
	for k := uint64(0); n > 0; k++ {
		m := min(n, poolTokens/2)
		b.WriteString(s.Prompt(seed+k*0x9e3779b97f4a7c15, m))
		n -= m
	}
	return b.String()
}

// Block is the text of prefix block id, n tokens long: requests that
// name the same block ids in the same order share those tokens exactly
// (Mooncake's hash_ids; a shorter n gives a prefix of the full block).
// n is at most MaxBlockTokens.
func (s *Synth) Block(id uint64, n int) string {
	n = min(max(n, 0), MaxBlockTokens)
	start := int(mix(id^0xb10c) % uint64(poolTokens-MaxBlockTokens+1))
	return s.text[s.offs[start]:s.offs[start+n]]
}

// MaxBlockTokens bounds a prefix block (a system prompt, a Mooncake
// block): half the pool.
const MaxBlockTokens = poolTokens / 2

// mix is splitmix64's finaliser: nearby seeds land far apart.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// defaultSynth is the synthesizer of the default tokenizer, built on
// first use and read-only afterwards.
var defaultSynth = sync.OnceValues(func() (*Synth, error) { return NewSynth(tokenizer.Default()) })

// DefaultSynth returns the synthesizer of tokenizer.Default().
func DefaultSynth() *Synth {
	s, err := defaultSynth()
	if err != nil {
		panic(err) // the embedded vocabulary: TestDefaultSynthExact
	}
	return s
}
