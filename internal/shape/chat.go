package shape

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/chattemplate"
)

// WithTemplate is s whose chat prompts are fitted to a model's chat
// template: FitChat makes the rendered prompt, template tokens included,
// the intended length, which is what a server reports as prompt_tokens.
// The memoized text is shared with s.
func (s *Synth) WithTemplate(t *chattemplate.Template) *Synth {
	c := *s
	c.tpl = t
	return &c
}

// Template is the chat template prompts are fitted to (nil: none; the
// count is of the messages' text alone).
func (s *Synth) Template() *chattemplate.Template { return s.tpl }

// CountChat is msgs' length as a server counts prompt_tokens: with
// tokenizer: server, the calibrated template tokens plus the contents'
// words; else rendered
// with the template (add_generation_prompt) and counted, or without a
// template the contents' counts summed. An error when the template
// fails to render them.
func (s *Synth) CountChat(msgs []chattemplate.Message) (int, error) {
	if s.server != nil {
		return s.serverCount(msgs)
	}
	if s.tpl == nil {
		n := 0
		for _, m := range msgs {
			n += s.tok.Count(m.Content)
		}
		return n, nil
	}
	text, err := s.tpl.Render(msgs, true)
	if err != nil {
		return 0, err
	}
	return s.tok.Count(text), nil
}

// maxFitRounds bounds FitChat's corrections; a round moves the user
// message's length by the miss, which is exact unless a word merges
// with a template token at the boundary.
const maxFitRounds = 6

// FitChat sets the content of msgs[last] (a user message) to synthesized
// text chosen by seed such that the whole conversation, rendered with
// the template (add_generation_prompt), is n tokens — or, when the
// template's own tokens and the other messages leave no room, the
// shortest prompt (one token of user text). It returns the rendered
// prompt's count: n unless ok is false. With tokenizer: server the
// server's calibrated template tokens stand for the rendering.
func (s *Synth) FitChat(msgs []chattemplate.Message, n int, seed uint64) (tokens int, ok bool, err error) {
	if s.server != nil {
		return s.serverFit(msgs, n, seed)
	}
	if s.tpl == nil {
		return 0, false, fmt.Errorf("FitChat: no chat template")
	}
	// A template that trims the message makes its first word's count
	// depend on the word; another window of text (seed) settles it.
	for try := range uint64(4) {
		if tokens, ok, err = s.fitChat(msgs, n, seed+try*0x9e3779b97f4a7c15); err != nil || ok {
			return tokens, ok, err
		}
	}
	return tokens, false, nil
}

func (s *Synth) fitChat(msgs []chattemplate.Message, n int, seed uint64) (tokens int, ok bool, err error) {
	last := len(msgs) - 1
	count := func(k int) (int, error) {
		msgs[last].Content = s.Prompt(seed, k)
		text, err := s.tpl.Render(msgs, true)
		if err != nil {
			return 0, err
		}
		return s.tok.Count(text), nil
	}
	k := max(n, 1)
	got, err := count(k)
	if err != nil {
		return 0, false, err
	}
	for range maxFitRounds {
		if got == n {
			return got, true, nil
		}
		next := max(k+n-got, 1)
		if next == k {
			break // at one token: the template alone is longer than n
		}
		k = next
		if got, err = count(k); err != nil {
			return 0, false, err
		}
	}
	return got, got == n, nil
}
