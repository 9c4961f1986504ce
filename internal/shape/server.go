package shape

import (
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// calibrated is a tokenizer calibrated against a server's POST /tokenize
// (tokenizer.Calibrated): its words are one server token each in running
// text, and it knows the server's template tokens per message structure.
type calibrated interface {
	Words() []string
	ChatOverhead(roles []string) (int, bool)
	Known(text string) (int, bool)
	Lead(text string) int
}

// Candidates are the words prompts are made of (without their leading
// space), in the order NewSynth considers them: what a calibration
// against a server tries.
func Candidates() []string { return append([]string(nil), candidates...) }

// Fits says chat prompts are fitted so that a server's prompt_tokens is
// the intended length: with a chat template, or calibrated against the
// server (tokenizer: server).
func (s *Synth) Fits() bool { return s.tpl != nil || s.server != nil }

// roles are msgs' roles in order.
func roles(msgs []chattemplate.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

// serverCount is msgs' count as the calibrated server counts it: the
// template's tokens for their structure plus each content's words. An
// error for a structure or a text the calibration does not cover.
func (s *Synth) serverCount(msgs []chattemplate.Message) (int, error) {
	n, ok := s.server.ChatOverhead(roles(msgs))
	if !ok {
		return 0, fmt.Errorf("tokenizer server: the message structure %s was not calibrated", tokenizer.Structure(roles(msgs)))
	}
	for i, m := range msgs {
		c, ok := s.server.Known(m.Content)
		if !ok {
			return 0, fmt.Errorf("tokenizer server: message %d (%s) is not synthesized text, which only the server can count", i, m.Role)
		}
		n += c + s.server.Lead(m.Content)
	}
	return n, nil
}

// serverFit sets the content of msgs[last] to k synthesized tokens
// chosen by seed so that the server counts n tokens in all: exact by
// construction (each word one server token, the template a constant).
func (s *Synth) serverFit(msgs []chattemplate.Message, n int, seed uint64) (int, bool, error) {
	last := len(msgs) - 1
	msgs[last].Content = ""
	base, err := s.serverCount(msgs)
	if err != nil {
		return 0, false, err
	}
	k := max(n-base, 1)
	text := s.Prompt(seed, k)
	for try := uint64(1); try < maxLeadTries && s.server.Lead(text) != 0; try++ {
		text = s.Prompt(seed+try*0x9e3779b97f4a7c15, k)
	}
	if lead := s.server.Lead(text); lead != 0 && k-lead >= 1 { // every window tried starts with a word of another bare count: keep it, fewer words after it
		text = firstWord(text) + s.Prompt(seed, k-lead-1)
		k -= lead
	}
	msgs[last].Content = text
	got := base + k + s.server.Lead(text)
	return got, got == n, nil
}

// firstWord is text's first word with its leading space.
func firstWord(text string) string {
	if end := strings.IndexByte(text[1:], ' ') + 1; end > 0 {
		return text[:end]
	}
	return text
}

// maxLeadTries bounds the windows serverFit tries for one whose first
// word counts one token bare too (with a template that trims).
const maxLeadTries = 64

// ServerStructures are the message structures a run's chat requests
// take (without sessions): a user prompt alone, or after a system prompt.
func ServerStructures() [][]string { return [][]string{{"user"}, {"system", "user"}} }
