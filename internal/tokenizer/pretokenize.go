package tokenizer

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// gpt2Pattern is ByteLevel's own split (use_regex: true).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// preStep is one pre-tokenizer: a regex split (keeping the matches as
// pieces, and the gaps unless remove), the byte-level mapping, or one of
// the fixed splits (Metaspace, BERT's, WhitespaceSplit).
type preStep struct {
	re             *regexp2.Regexp
	remove         bool // Split behavior Removed: matches are dropped
	byteLevel      bool
	addPrefixSpace bool
	meta           *metaspace
	bert, wsSplit  bool
}

// preSteps are the pre-tokenizers of a tokenizer.json (none: each segment
// is one piece, as SentencePiece-style BPE has it).
func preSteps(file string, c *hfComponent) ([]preStep, error) {
	if c == nil {
		return nil, nil
	}
	return appendSteps(file, nil, c)
}

// endsByteLevel says the pre-tokenizers end in the byte-level mapping.
func endsByteLevel(steps []preStep) bool { return len(steps) > 0 && steps[len(steps)-1].byteLevel }

func appendSteps(file string, steps []preStep, c *hfComponent) ([]preStep, error) {
	switch c.Type {
	case "Sequence":
		for i := range c.Pretokenizers {
			var err error
			if steps, err = appendSteps(file, steps, &c.Pretokenizers[i]); err != nil {
				return nil, err
			}
		}
		return steps, nil
	case "ByteLevel":
		if c.UseRegex == nil || *c.UseRegex {
			re, err := compile(file, gpt2Pattern)
			if err != nil {
				return nil, err
			}
			return append(steps, preStep{re: re, addPrefixSpace: c.AddPrefixSpace}, preStep{byteLevel: true}), nil
		}
		return append(steps, preStep{byteLevel: true, addPrefixSpace: c.AddPrefixSpace}), nil
	case "Split":
		return appendSplit(file, steps, c)
	case "Metaspace":
		m, err := newMetaspace(file, c)
		return append(steps, preStep{meta: m}), err
	case "BertPreTokenizer":
		return append(steps, preStep{bert: true}), nil
	case "WhitespaceSplit":
		return append(steps, preStep{wsSplit: true}), nil
	}
	return nil, &UnsupportedError{File: file, What: fmt.Sprintf("pre-tokenizer %q", c.Type)}
}

func appendSplit(file string, steps []preStep, c *hfComponent) ([]preStep, error) {
	if c.Invert || (c.Behavior != "Isolated" && c.Behavior != "Removed") {
		return nil, &UnsupportedError{File: file, What: fmt.Sprintf("Split behavior %q (invert %v)", c.Behavior, c.Invert)}
	}
	pat, ok := c.Pattern["Regex"]
	if !ok {
		s, ok := c.Pattern["String"]
		if !ok {
			return nil, &UnsupportedError{File: file, What: "a Split without a Regex or String pattern"}
		}
		pat = regexp2.Escape(s)
	}
	re, err := compile(file, pat)
	if err != nil {
		return nil, err
	}
	return append(steps, preStep{re: re, remove: c.Behavior == "Removed"}), nil
}

func compile(file, pat string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(pat, regexp2.Unicode)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: pattern %q: %w", file, pat, err)
	}
	// A pattern from a file could backtrack without end; past this a
	// match gives up and the rest of the text is one piece.
	re.MatchTimeout = 5 * time.Second
	return re, nil
}

// pretokenize applies steps to text and returns the pieces, byte-level
// mapped when the last step is ByteLevel. first says text starts the
// input (Metaspace's prepend_scheme "first").
func pretokenize(steps []preStep, text string, first bool) []string {
	pieces := []string{text}
	for _, s := range steps {
		var next []string
		for i, p := range pieces {
			if s.addPrefixSpace && !strings.HasPrefix(p, " ") {
				p = " " + p
			}
			switch {
			case s.byteLevel:
				next = append(next, byteLevel(p))
			case s.re != nil:
				next = s.split(next, p)
			case s.meta != nil:
				next = s.meta.split(next, p, first && i == 0)
			case s.bert:
				next = bertSplit(next, p)
			case s.wsSplit:
				next = append(next, strings.Fields(p)...)
			default:
				next = append(next, p)
			}
		}
		pieces = next
	}
	return pieces
}

// split appends the pieces of p: each match, and each non-empty gap
// between matches (dropped matches when remove).
func (s *preStep) split(out []string, p string) []string {
	last := 0
	cur := runeCursor{s: p}
	m, err := s.re.FindStringMatch(p)
	for err == nil && m != nil {
		start := cur.byteAt(m.RuneIndex)
		end := cur.byteAt(m.RuneIndex + m.RuneLength)
		if start > last {
			out = append(out, p[last:start])
		}
		if !s.remove && end > start {
			out = append(out, p[start:end])
		}
		last = end
		m, err = s.re.FindNextMatch(m)
	}
	if last < len(p) {
		out = append(out, p[last:])
	}
	return out
}

// runeCursor converts regexp2's rune indexes, which only grow, into byte
// offsets of s in one pass.
type runeCursor struct {
	s           string
	runes, byte int
}

func (c *runeCursor) byteAt(runes int) int {
	for c.runes < runes && c.byte < len(c.s) {
		_, size := utf8.DecodeRuneInString(c.s[c.byte:])
		c.byte += size
		c.runes++
	}
	return c.byte
}

// byteToRune is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the others for code points from 256 up.
var byteToRune = func() (m [256]rune) {
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

func byteLevel(p string) string {
	var b strings.Builder
	b.Grow(len(p) * 2)
	for i := 0; i < len(p); i++ {
		b.WriteRune(byteToRune[p[i]])
	}
	return b.String()
}
