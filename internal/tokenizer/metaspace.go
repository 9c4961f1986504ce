package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
)

// metaspace is SentencePiece's pre-tokenizer as Hugging Face writes it:
// spaces become the replacement (▁), which is prepended to the input
// (always, or only at its very start: prepend_scheme "first"), and with
// split each ▁ starts a new piece.
type metaspace struct {
	rep           string
	always, first bool
	splits        bool
}

func newMetaspace(file string, c *hfComponent) (*metaspace, error) {
	m := &metaspace{rep: c.Replacement, splits: c.Split == nil || *c.Split}
	if m.rep == "" {
		m.rep = "\u2581"
	}
	switch c.PrependScheme {
	case "always":
		m.always = true
	case "first":
		m.first = true
	case "never":
	case "": // files before prepend_scheme: add_prefix_space
		m.always = c.AddPrefixSpace
	default:
		return nil, &UnsupportedError{File: file, What: fmt.Sprintf("Metaspace prepend_scheme %q", c.PrependScheme)}
	}
	return m, nil
}

// split appends the pieces of p; atStart says p begins the input.
func (m *metaspace) split(out []string, p string, atStart bool) []string {
	p = strings.ReplaceAll(p, " ", m.rep)
	if (m.always || (m.first && atStart)) && !strings.HasPrefix(p, m.rep) {
		p = m.rep + p
	}
	if !m.splits {
		return append(out, p)
	}
	for p != "" { // each replacement starts a piece (merged with the next)
		j := strings.Index(p[1:], m.rep) // from byte 1: a match never starts inside a rune
		if j < 0 {
			return append(out, p)
		}
		out = append(out, p[:j+1])
		p = p[j+1:]
	}
	return out
}

// bertSplit is BERT's pre-tokenizer: whitespace separates (and goes),
// each punctuation character is a piece of its own.
func bertSplit(out []string, p string) []string {
	start := -1
	for i, r := range p {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, p[start:i])
			}
			start = -1
		case bertPunct(r):
			if start >= 0 {
				out = append(out, p[start:i])
			}
			out = append(out, string(r))
			start = -1
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, p[start:])
	}
	return out
}

// bertPunct is ASCII punctuation or a Unicode punctuation category (P*,
// Unicode 9.0 as tokenizers has it).
func bertPunct(r rune) bool {
	if r < 0x80 {
		return (r >= '!' && r <= '/') || (r >= ':' && r <= '@') || (r >= '[' && r <= '`') || (r >= '{' && r <= '~')
	}
	return unicode.Is(hfPunct, r)
}
