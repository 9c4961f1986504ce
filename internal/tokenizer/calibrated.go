package tokenizer

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// ServerSpec is the tokenizer spec `tokenizer: server`: lengths are the
// target's own counts, learnt from its POST /tokenize before the load
// (internal/target's calibration) and held by a Calibrated.
const ServerSpec = "server"

// Calibration is what a target's POST /tokenize said about the prompts
// sagebench synthesizes, for every model a run asks for: the words each
// of which it counts as exactly one token in running text, and the tokens
// its chat template adds to each message structure a run sends (the
// server's count of the messages minus their contents' tokens, the same
// constant at every length tried). It goes into the run's records.
type Calibration struct {
	// Models are the models calibrated (each once).
	Models []string `json:"models"`
	// Words are the words kept, each one token after a space (written
	// here without it), in the synthesizer's order.
	Words []string `json:"words"`
	// Dropped are the candidate words some model does not count as one
	// token in running text.
	Dropped []string `json:"dropped,omitempty"`
	// Bare is each word's count alone, without its leading space
	// (aligned with Words): what a message's first word counts when the
	// chat template trims the message (Trims).
	Bare []int `json:"bare"`
	// Trims says the chat template strips the space before a message's
	// first word (Llama 3's `| trim`), so that word counts Bare.
	Trims bool `json:"trims"`
	// Overhead is the template's tokens per message structure: the roles
	// of the messages joined by "+" ("user", "system+user").
	Overhead map[string]int `json:"overhead"`
	// Lengths are the content lengths (tokens) at which every overhead
	// was measured and found the same.
	Lengths []int `json:"lengths"`
	// Verified is how many fresh sample prompts the server then counted
	// exactly as predicted (every one, or the calibration failed).
	Verified int `json:"verified"`
	// Texts is how many given prompts (a dataset's) the server counted,
	// each once, as the content of a user message.
	Texts int `json:"texts,omitempty"`
	// Requests is how many /tokenize requests the calibration took.
	Requests int `json:"requests"`
	// TextRequests is how many /tokenize requests counting and checking
	// the given prompts (Texts) took, beside Requests: at most
	// MaxServerTexts plus a few per model, on their own time bound.
	TextRequests int `json:"text_requests,omitempty"`
}

// Structure is the key of Calibration.Overhead for messages of roles.
func Structure(roles []string) string { return strings.Join(roles, "+") }

// Calibrated is the tokenizer of `tokenizer: server`: it counts text
// made of its calibrated words (each after a space) as the server does,
// one token a word, and knows the server's template overhead per message
// structure. It cannot count other text; Count falls back to the default
// tokenizer there and Misses says how often that happened (the paths
// that count other text — datasets, sessions' answers, Q1's RAG prompts
// — are refused with tokenizer: server).
type Calibrated struct {
	cal      Calibration
	ids      map[string]int // " word" → its index in cal.Words
	texts    map[string]int // given texts → the server's count of each as a message's content
	fallback Tokenizer
	misses   atomic.Int64
}

// NewCalibrated returns the tokenizer of cal.
func NewCalibrated(cal Calibration) *Calibrated {
	c := &Calibrated{cal: cal, ids: make(map[string]int, len(cal.Words)), fallback: Default()}
	c.cal.Overhead = maps.Clone(cal.Overhead)
	for i, w := range cal.Words {
		c.ids[" "+w] = i
	}
	return c
}

// WithTexts is c that also knows texts (prompts it cannot synthesize: a
// dataset's), each with the server's count of it as a message's content
// — the count of a user message of it less the template's tokens —
// so a request of one is counted as the server counts it.
// requests is how many /tokenize requests learning them took.
func (c *Calibrated) WithTexts(texts map[string]int, requests int) *Calibrated {
	cal := c.Calibration()
	cal.Texts, cal.TextRequests = len(texts), requests
	out := NewCalibrated(cal)
	out.texts = maps.Clone(texts)
	return out
}

// Name is ServerSpec.
func (c *Calibrated) Name() string { return ServerSpec }

// Calibration is what c was built from.
func (c *Calibrated) Calibration() Calibration {
	out := c.cal
	out.Overhead = maps.Clone(c.cal.Overhead)
	out.Words, out.Dropped, out.Models = slices.Clone(out.Words), slices.Clone(out.Dropped), slices.Clone(out.Models)
	out.Bare, out.Lengths = slices.Clone(out.Bare), slices.Clone(out.Lengths)
	return out
}

// Words are the calibrated words, each with its leading space.
func (c *Calibrated) Words() []string {
	out := make([]string, len(c.cal.Words))
	for i, w := range c.cal.Words {
		out[i] = " " + w
	}
	return out
}

// ChatOverhead is the server's template tokens for messages of roles, and
// whether that structure was calibrated.
func (c *Calibrated) ChatOverhead(roles []string) (int, bool) {
	n, ok := c.cal.Overhead[Structure(roles)]
	return n, ok
}

// Lead is the tokens the server counts for text at the start of a
// message beyond Known's: with a template that trims, its first word's
// bare count less one (0 for text that is not Known).
func (c *Calibrated) Lead(text string) int {
	if _, given := c.texts[text]; given || !c.cal.Trims || len(text) < 2 {
		return 0 // a given text's count is the server's in a message
	}
	end := strings.IndexByte(text[1:], ' ') + 1
	if end == 0 {
		end = len(text)
	}
	i, ok := c.ids[text[:end]]
	if !ok || i >= len(c.cal.Bare) {
		return 0
	}
	return c.cal.Bare[i] - 1
}

// Known is the server's count of text when text is a given one
// (WithTexts) or made of calibrated words only, each after a space (""
// is 0 tokens).
func (c *Calibrated) Known(text string) (int, bool) {
	if n, ok := c.texts[text]; ok {
		return n, true
	}
	return c.words(text)
}

// words is text's count when it is made of calibrated words only.
func (c *Calibrated) words(text string) (int, bool) {
	if text == "" {
		return 0, true
	}
	if text[0] != ' ' {
		return 0, false
	}
	n := 0
	for rest := text; rest != ""; n++ {
		end := strings.IndexByte(rest[1:], ' ') + 1
		if end == 0 {
			end = len(rest)
		}
		if _, ok := c.ids[rest[:end]]; !ok {
			return 0, false
		}
		rest = rest[end:]
	}
	return n, true
}

// Count is Known's count; for other text, the default tokenizer's (a
// miss, counted by Misses).
func (c *Calibrated) Count(text string) int {
	if n, ok := c.Known(text); ok {
		return n
	}
	c.misses.Add(1)
	return c.fallback.Count(text)
}

// Encode is the calibrated words' indices; other text is a miss, encoded
// by the default tokenizer (its IDs shifted past the words').
func (c *Calibrated) Encode(text string) []int {
	if _, ok := c.words(text); ok {
		return c.wordIDs(text)
	}
	c.misses.Add(1)
	ids := c.fallback.Encode(text)
	for i := range ids {
		ids[i] += len(c.cal.Words)
	}
	return ids
}

// wordIDs are the indices of text's words (text is Known).
func (c *Calibrated) wordIDs(text string) []int {
	fields := strings.Split(text, " ")[1:]
	ids := make([]int, len(fields))
	for i, f := range fields {
		ids[i] = c.ids[" "+f]
	}
	return ids
}

// Misses is how many texts Count or Encode could not count as the server
// does (0 on every path tokenizer: server allows).
func (c *Calibrated) Misses() int64 { return c.misses.Load() }

// ErrNotCalibrated is the error of ServerRef(nil)'s Get: tokenizer:
// server is known only after the calibration against the target.
var ErrNotCalibrated = errors.New("tokenizer: server is calibrated against the target before the load, and was not yet")

// ServerRef is the Ref of tokenizer: server: cal once calibrated, or,
// with cal nil, a Ref whose Get fails with ErrNotCalibrated.
func ServerRef(cal *Calibrated) *Ref {
	if cal == nil {
		return &Ref{spec: ServerSpec, get: func() (Tokenizer, error) { return nil, ErrNotCalibrated }}
	}
	return RefOf(ServerSpec, cal)
}

// RefFor is the Ref of a run's spec: ServerRef(nil) for ServerSpec,
// else NewRef(spec).
func RefFor(spec string) *Ref {
	if spec == ServerSpec {
		return ServerRef(nil)
	}
	return NewRef(spec)
}
