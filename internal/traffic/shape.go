package traffic

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// Upper bounds on request shapes: far beyond any model's context, and low
// enough that a typo cannot make the harness build gigabytes of prompts.
const (
	MaxPromptWords = 200_000 // ~250k tokens, above the largest contexts served
	MaxTokens      = 1 << 20
	MaxInputs      = 4096 // texts per embedding request
	MaxInputWords  = 100_000
)

// Validate checks s under the config key key (e.g. "q2.llm") and
// compiles its token shape (reading empirical files). The shorthands
// max_tokens and prompt_words win over output_tokens and input_tokens
// (a file that sets them means them) and are folded into those.
func (s *LLMShape) Validate(key string) error {
	switch {
	case s.Model == "":
		return fmt.Errorf("%s.model must be set", key)
	case s.MaxTokens < 0 || s.MaxTokens > MaxTokens:
		return fmt.Errorf("%s.max_tokens %d: must be in [1, %d]", key, s.MaxTokens, MaxTokens)
	case s.PromptWords < 0 || s.PromptWords > MaxPromptWords:
		return fmt.Errorf("%s.prompt_words %d: must be in [1, %d]", key, s.PromptWords, MaxPromptWords)
	}
	if s.MaxTokens > 0 {
		s.OutputTokens, s.MaxTokens = shape.FixedDist(s.MaxTokens), 0
	}
	if s.PromptWords > 0 {
		s.InputTokens, s.PromptWords = shape.FixedDist(s.PromptWords), 0
	}
	if !s.InputTokens.IsSet() || !s.OutputTokens.IsSet() {
		return fmt.Errorf("%s: input_tokens and output_tokens (or max_tokens) must be set", key)
	}
	d, err := s.compile(key, 0, 0)
	if err != nil {
		return err
	}
	s.drawer = d
	return nil
}

// compile is shape.Shape.CompileIn in the shape's tokenizer (UseTokenizer).
func (s *LLMShape) compile(key string, input, output int) (*shape.Drawer, error) {
	var tok tokenizer.Tokenizer
	if s.Source != nil && s.tokenizer != nil {
		var err error
		if tok, err = s.tokenizer.Get(); err != nil {
			return nil, fmt.Errorf("%s.source: measuring it in the run's tokenizer: %w", key, err)
		}
	}
	return s.CompileIn(key, input, output, tok)
}

// Drawer returns the compiled token shape: Validate's, else compiled now
// and kept (with max_tokens and prompt_words as the fallback lengths), so
// a class's shape from With reads its files once however many times it
// fills. An uncompilable shape falls back to fixed lengths of at least
// one token. Not for concurrent use on one LLMShape while uncompiled.
func (s *LLMShape) Drawer() *shape.Drawer {
	if s.drawer != nil {
		return s.drawer
	}
	d, err := s.compile("llm", max(s.PromptWords, 1), max(s.MaxTokens, 1))
	if err != nil {
		fixed := shape.Shape{}
		d, _ = fixed.Compile("llm", max(s.PromptWords, 1), max(s.MaxTokens, 1))
	}
	s.drawer = d
	return d
}

// Fill draws the lengths (and prefix group, and turns) of every LLM item
// from its text seed: the same seed gives the same shapes, whatever the
// target. A Q calls it on the items it drew.
func (s *LLMShape) Fill(items []Item) { s.FillIf(items, func(Item) bool { return true }) }

// DefaultBlockTokens is the block size of a Mooncake trace's hash_ids.
const DefaultBlockTokens = 512

// FillTrace gives the LLM items of a trace schedule with request lengths
// (load.Schedule.Entries) their arrival's lengths and prefix blocks, in
// place of the drawn ones: item i is arrival i. blockTokens is the size
// of a hash_id's block (0: DefaultBlockTokens). Without entries it does
// nothing.
func FillTrace(items []Item, sched load.Schedule, blockTokens int) {
	if len(sched.Entries) != len(items) {
		return
	}
	if blockTokens <= 0 {
		blockTokens = DefaultBlockTokens
	}
	for i := range items {
		if items[i].Type != protocol.TypeLLM {
			continue
		}
		e := sched.Entries[i]
		items[i].In, items[i].Out, items[i].Group, items[i].Turns = e.Input, max(e.Output, 1), 0, 0
		if len(e.HashIDs) > 0 {
			items[i].Blocks, items[i].BlockTokens = e.HashIDs, blockTokens
		}
	}
}

// With returns s with the lengths o sets (a class's or tenant's own
// input_tokens and output_tokens) in place of its own; s itself when o
// is nil. Validate the result under the class's key.
func (s LLMShape) With(o *shape.Shape) LLMShape {
	if o == nil {
		return s
	}
	if o.InputTokens.IsSet() {
		s.InputTokens, s.PromptWords, s.drawer = o.InputTokens, 0, nil
	}
	if o.OutputTokens.IsSet() {
		s.OutputTokens, s.MaxTokens, s.drawer = o.OutputTokens, 0, nil
	}
	return s
}

// FillIf is Fill for the items keep selects.
func (s *LLMShape) FillIf(items []Item, keep func(Item) bool) {
	d := s.Drawer()
	for i := range items {
		if items[i].Type != protocol.TypeLLM || !keep(items[i]) {
			continue
		}
		s.setLengths(&items[i], d.Draw(items[i].Text))
	}
}

// setLengths copies drawn lengths into it (and a trace request's prefix
// blocks, of the shape's block size).
func (s *LLMShape) setLengths(it *Item, l shape.Lengths) {
	it.In, it.Out, it.Group, it.Turns, it.Entry = l.Input, l.Output, l.Group, l.Turns, l.Entry
	if len(l.Blocks) > 0 {
		it.Blocks, it.BlockTokens = l.Blocks, s.BlockTokens
		if it.BlockTokens <= 0 {
			it.BlockTokens = DefaultBlockTokens
		}
	}
}

// ValidateClass checks a class's override o of s under key (e.g.
// "q2.classes.critical.llm"): the merged shape must compile, and o may
// set lengths only.
func (s LLMShape) ValidateClass(key string, o *shape.Shape) error {
	if o == nil {
		return nil
	}
	if o.Prefix != nil || o.Sessions != nil {
		return fmt.Errorf("%s: a class sets input_tokens and output_tokens only; prefix and sessions belong to the workload's llm block", key)
	}
	m := s.With(o)
	_, err := m.compile(key, max(m.PromptWords, 1), max(m.MaxTokens, 1))
	return err
}

// Validate checks s under the config key key (e.g. "q2.embedding").
func (s EmbedShape) Validate(key string) error {
	switch {
	case s.Model == "":
		return fmt.Errorf("%s.model must be set", key)
	case s.Inputs < 1 || s.Inputs > MaxInputs:
		return fmt.Errorf("%s.inputs %d: must be in [1, %d]", key, s.Inputs, MaxInputs)
	case s.Words < 1 || s.Words > MaxInputWords:
		return fmt.Errorf("%s.words %d: must be in [1, %d]", key, s.Words, MaxInputWords)
	}
	return nil
}

// TokenPlan summarises the drawn lengths of the LLM items per class
// (class(it); "llm" when class is nil), classes in first-seen order:
// what --dry-run prints. A prefixed item counts its prefix (prefixTokens)
// in its input; a session's first turn stands for it.
func TokenPlan(items []Item, prefixTokens int, class func(Item) string) []workload.TokenDist {
	type acc struct{ in, out []int }
	var order []string
	by := map[string]*acc{}
	for _, it := range items {
		if it.Type != protocol.TypeLLM {
			continue
		}
		k := "llm"
		if class != nil {
			k = class(it)
		}
		a, ok := by[k]
		if !ok {
			a = &acc{}
			by[k] = a
			order = append(order, k)
		}
		a.in = append(a.in, it.In+prefixTokens*min(it.Group, 1))
		a.out = append(a.out, it.Out)
	}
	out := make([]workload.TokenDist, 0, len(order))
	for _, k := range order {
		out = append(out, workload.TokenDist{Class: k, Input: shape.Summarize(by[k].in), Output: shape.Summarize(by[k].out)})
	}
	return out
}

// PrefixTokens is the length of the shape's shared prefix (0: none).
func (s *LLMShape) PrefixTokens() int {
	if s.Prefix == nil {
		return 0
	}
	return s.Prefix.Tokens
}
