package shape

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/dataset"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Shape is the token shape of a workload's chat completions: the input
// (prompt) and output lengths, optional shared prefixes and sessions.
// traffic.LLMShape embeds it, so every Q's llm block takes these keys.
type Shape struct {
	// InputTokens is the length of the prompt in tokens of the run's
	// tokenizer (without a prefix: a prefixed request is Prefix.Tokens
	// longer, as AIPerf's and GuideLLM's prefix options are).
	InputTokens Dist `yaml:"input_tokens,omitempty" json:"input_tokens,omitzero"`
	// OutputTokens is the number of tokens to generate (sent as
	// max_tokens, with ignore_eos/min_tokens on real servers).
	OutputTokens Dist `yaml:"output_tokens,omitempty" json:"output_tokens,omitzero"`
	// Prefix, when set, starts a share of the requests with one of a few
	// shared system prompts.
	Prefix *Prefix `yaml:"prefix,omitempty" json:"prefix,omitempty"`
	// Sessions, when set, makes each arrival a multi-turn conversation.
	Sessions *Sessions `yaml:"sessions,omitempty" json:"sessions,omitempty"`
	// BlockTokens is the size of a trace's prefix block (a Mooncake
	// hash_id) in tokens (0: 512, Mooncake's).
	BlockTokens int `yaml:"block_tokens,omitempty" json:"block_tokens,omitempty"`
	// Source, when set, replays a prompt dataset's texts instead of
	// synthesized prompts.
	Source *Source `yaml:"source,omitempty" json:"source,omitempty"`
}

// Source is `source: {file: sharegpt.json, format: sharegpt, sessions:
// true}`: each request replays a conversation drawn from the dataset by
// the request's seed (its first human turn, or with sessions all its
// human turns as a session's turns); input lengths are the texts'
// lengths in tokens and output lengths the reference answers' (the
// shape's output_tokens where the dataset has none).
type Source struct {
	File string `yaml:"file" json:"file"`
	// Format is sharegpt or prompts (texts), or a trace format —
	// mooncake, azure, burstgpt — whose requests' (input, output) lengths
	// are drawn jointly (empirical pairs; the arrivals are the schedule's).
	Format   string `yaml:"format" json:"format"`
	Sessions bool   `yaml:"sessions,omitempty" json:"sessions,omitempty"`
}

// Prefix is `prefix: {groups: G, tokens: P, share: s}`: a share s of the
// requests starts with one of G system prompts of P tokens (drawn
// uniformly), which a prefix cache or a KV-aware router can reuse.
type Prefix struct {
	Groups int     `yaml:"groups" json:"groups"`
	Tokens int     `yaml:"tokens" json:"tokens"`
	Share  float64 `yaml:"share" json:"share"`
}

// Validate names key (e.g. "q2.llm.prefix").
func (p *Prefix) Validate(key string) error {
	if p.Groups < 1 || p.Tokens < 1 || p.Tokens > MaxBlockTokens || !(p.Share >= 0 && p.Share <= 1) {
		return fmt.Errorf("%s: groups ≥ 1, tokens in [1, %d] and share in [0, 1] are required (got %d, %d, %v)", key, MaxBlockTokens, p.Groups, p.Tokens, p.Share)
	}
	return nil
}

// Sessions is `sessions: {turns: dist, think_time: dist, output_tokens:
// dist}`: each arrival opens a conversation of a drawn number of turns;
// turn k+1 is sent a think time (milliseconds) after turn k's answer
// ended and carries the conversation so far (its user messages and the
// answers received) plus a new user message of input_tokens.
type Sessions struct {
	Turns     Dist `yaml:"turns" json:"turns"`
	ThinkTime Dist `yaml:"think_time,omitempty" json:"think_time,omitzero"`
	// OutputTokens of every turn (default: the shape's output_tokens).
	OutputTokens Dist `yaml:"output_tokens,omitempty" json:"output_tokens,omitzero"`
}

// Lengths are one request's drawn sizes.
type Lengths struct {
	Input, Output int
	Group         int // prefix group + 1; 0: no prefix
	Turns         int // turns of a session (0: not a session)
	Entry         int // dataset conversation (1-based; 0: synthesized)
	// Blocks are the prefix blocks (Mooncake hash_ids) of a trace request
	// drawn for its lengths.
	Blocks []int64
}

// Drawer draws Lengths from a compiled Shape.
type Drawer struct {
	in, out, turns, think, turnOut *Sampler
	prefix                         *Prefix
	convs                          []dataset.Conversation
	measuredIn                     string          // the tokenizer convs' lengths are counted in (tokenizerID)
	pairs                          []dataset.Entry // a trace's requests, drawn for their lengths
	sessions                       bool            // source conversations are sessions
}

// Compile checks s under key (e.g. "q2.llm") and reads its files;
// input and output are the fallbacks when the lengths are unset
// (prompt_words and max_tokens). A prompt dataset is measured in the
// default tokenizer.
func (s *Shape) Compile(key string, input, output int) (*Drawer, error) {
	return s.CompileIn(key, input, output, nil)
}

// CompileIn is Compile with a prompt dataset measured in tok (nil: the
// default tokenizer): the run's, so its lengths are those the target
// counts.
func (s *Shape) CompileIn(key string, input, output int, tok tokenizer.Tokenizer) (*Drawer, error) {
	in, out := s.InputTokens, s.OutputTokens
	if !in.IsSet() {
		in = FixedDist(input)
	}
	if !out.IsSet() {
		out = FixedDist(output)
	}
	d := &Drawer{prefix: s.Prefix}
	var err error
	if d.in, err = in.Compile(key+".input_tokens", 1); err != nil {
		return nil, err
	}
	if d.out, err = out.Compile(key+".output_tokens", 1); err != nil {
		return nil, err
	}
	if s.BlockTokens < 0 || s.BlockTokens > MaxBlockTokens {
		return nil, fmt.Errorf("%s.block_tokens %d: must be in [0, %d] (0: 512)", key, s.BlockTokens, MaxBlockTokens)
	}
	if s.Prefix != nil {
		if err := s.Prefix.Validate(key + ".prefix"); err != nil {
			return nil, err
		}
	}
	if s.Source != nil {
		if err := d.compileSource(key+".source", s.Source, tok); err != nil {
			return nil, err
		}
	}
	if s.Sessions != nil {
		return d, d.compileSessions(key+".sessions", s.Sessions)
	}
	if d.sessions { // dataset sessions without sessions: no think time
		d.think, _ = FixedDist(0).Compile(key, 0)
		d.turnOut = d.out
	}
	return d, nil
}

// compileSource reads the dataset, measuring it with tok (nil: the
// default tokenizer).
func (d *Drawer) compileSource(key string, s *Source, tok tokenizer.Tokenizer) error {
	if s.File == "" {
		return fmt.Errorf("%s.file must name a %s dataset", key, strings.Join(dataset.PromptFormats(), " or "))
	}
	if s.Sessions && s.Format != dataset.ShareGPT {
		return fmt.Errorf("%s.sessions: only a sharegpt dataset has conversations", key)
	}
	if slices.Contains(dataset.TraceFormats(), s.Format) { // lengths only: drawn jointly
		es, err := dataset.ReadTrace(s.File, s.Format)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		d.pairs = es
		return nil
	}
	if tok == nil {
		tok = tokenizer.Default()
	}
	convs, err := dataset.ReadPrompts(s.File, s.Format, tok)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	d.convs, d.sessions, d.measuredIn = convs, s.Sessions, tokenizerID(tok)
	return nil
}

// MeasuredIn reports whether the dataset's lengths are counted in tok
// (false without a dataset): otherwise a sender counts a text again.
func (d *Drawer) MeasuredIn(tok tokenizer.Tokenizer) bool {
	return d.measuredIn != "" && d.measuredIn == tokenizerID(tok)
}

// tokenizerID tells tokenizers apart: two tokenizer.json files of one
// name by their SHA-256.
func tokenizerID(tok tokenizer.Tokenizer) string {
	return tok.Name() + "\x00" + tokenizer.Fingerprint(tok)
}

// Prompts are the first turns' texts of the dataset's conversations (nil
// without a dataset): what a single-turn request of it sends.
func (d *Drawer) Prompts() []string {
	out := make([]string, 0, len(d.convs))
	for _, c := range d.convs {
		if len(c.Turns) > 0 {
			out = append(out, c.Turns[0].Text)
		}
	}
	return out
}

// Conversation returns dataset conversation entry (1-based), nil when
// there is none.
func (d *Drawer) Conversation(entry int) *dataset.Conversation {
	if entry < 1 || entry > len(d.convs) {
		return nil
	}
	return &d.convs[entry-1]
}

func (d *Drawer) compileSessions(key string, s *Sessions) error {
	var err error
	if d.turns, err = s.Turns.Compile(key+".turns", 1); err != nil {
		return err
	}
	think := s.ThinkTime
	if !think.IsSet() {
		think = FixedDist(0)
	}
	if d.think, err = think.Compile(key+".think_time", 0); err != nil {
		return err
	}
	d.turnOut = d.out
	if s.OutputTokens.IsSet() {
		d.turnOut, err = s.OutputTokens.Compile(key+".output_tokens", 1)
	}
	return err
}

// lengthStream separates the length draws from other uses of a seed.
const lengthStream = 0x6c656e67746873 // "lengths"

// Draw returns the lengths of the request whose text seed is seed.
func (d *Drawer) Draw(seed uint64) Lengths {
	rng := rand.New(rand.NewPCG(seed, lengthStream))
	l := Lengths{Input: d.in.Draw(rng), Output: d.out.Draw(rng)}
	if p := d.prefix; p != nil && rng.Float64() < p.Share {
		l.Group = 1 + rng.IntN(p.Groups)
	}
	if d.turns != nil {
		l.Turns = d.turns.Draw(rng)
	}
	if len(d.pairs) > 0 {
		e := d.pairs[mix(seed)%uint64(len(d.pairs))]
		l.Input, l.Output, l.Blocks = e.Input, max(e.Output, 1), e.HashIDs
	}
	if len(d.convs) > 0 {
		l.Entry = 1 + int(mix(seed)%uint64(len(d.convs)))
		c := d.convs[l.Entry-1]
		l.Input = c.Turns[0].Input
		if c.Turns[0].Output > 0 {
			l.Output = c.Turns[0].Output
		}
		if d.sessions {
			l.Turns = len(c.Turns)
		}
	}
	return l
}

// Turn returns the lengths of turn k ≥ 1 of a session, and the think
// time before it in ms.
func (d *Drawer) Turn(seed uint64, k int) (input, output, thinkMs int) {
	rng := rand.New(rand.NewPCG(seed, lengthStream+uint64(k)))
	return d.in.Draw(rng), d.turnOut.Draw(rng), d.think.Draw(rng)
}

// GroupSeed is the block id of prefix group g (1-based).
func GroupSeed(g int) uint64 { return 0x70726566 ^ uint64(g)*0x9e3779b97f4a7c15 }

// Of is the shape of fixed input and output lengths.
func Of(input, output int) Shape {
	return Shape{InputTokens: FixedDist(input), OutputTokens: FixedDist(output)}
}
