package redact

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// normalize decodes the escapes a secret may hide behind in text that
// came from a peer: percent-encoding (%HH, either case), JSON escapes
// (\uXXXX, \/, \\, \") and any mix of them, so that a secret is found by
// a plain search of the result. pos maps each byte of the result to the
// offset in s where the text producing it starts (pos[len(norm)] is
// len(s)); pos is nil when s holds no escape (norm is s).
func normalize(s string) (norm string, pos []int) {
	if !strings.ContainsAny(s, `%\`) {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	pos = make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		c, n := decodeAt(s, i)
		for range len(c) {
			pos = append(pos, i)
		}
		b = append(b, c...)
		i += n
	}
	return string(b), append(pos, len(s))
}

// decodeAt decodes the escape at s[i] (or takes the byte as it is): the
// bytes it stands for and how many bytes of s it spans.
func decodeAt(s string, i int) (string, int) {
	switch {
	case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
		return string([]byte{unhex(s[i+1])<<4 | unhex(s[i+2])}), 3
	case s[i] != '\\' || i+1 >= len(s):
		return s[i : i+1], 1
	case s[i+1] == '/' || s[i+1] == '\\' || s[i+1] == '"':
		return s[i+1 : i+2], 2
	case s[i+1] == 'u' && i+5 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]):
		r := rune(unhex(s[i+2]))<<12 | rune(unhex(s[i+3]))<<8 | rune(unhex(s[i+4]))<<4 | rune(unhex(s[i+5]))
		if utf8.ValidRune(r) {
			return string(r), 6
		}
	}
	return s[i : i+1], 1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// span is a half-open byte range of the original text.
type span struct{ from, to int }

// maxUnescape is how many layers of escaping are seen through: a JSON
// body quoting a JSON-escaped secret, as our own JSON records of it, or
// a percent-encoded %XX.
const maxUnescape = 3

// layer is the text after some layers of unescaping, with where each of
// its bytes came from in the original text (nil: the original itself).
type layer struct {
	text string
	pos  []int
}

func (l layer) at(i int) int {
	if l.pos == nil {
		return i
	}
	return l.pos[i]
}

// layers returns s and its unescaped forms, each mapped to s.
func layers(s string) []layer {
	out := []layer{{text: s}}
	for range maxUnescape {
		prev := out[len(out)-1]
		norm, pos := normalize(prev.text)
		if pos == nil {
			break
		}
		for i, p := range pos {
			pos[i] = prev.at(p)
		}
		out = append(out, layer{text: norm, pos: pos})
	}
	return out
}

// secretsOut replaces every occurrence of a secret's forms (seen through
// escapes) by Mask. A base64 core's match takes the base64 characters
// right around it too (they carry a few of the secret's bits) and the
// padding after it.
func (r *Redactor) secretsOut(s string) string {
	var hits []span
	for _, l := range layers(s) {
		for _, f := range r.forms {
			for off := 0; ; {
				i := strings.Index(l.text[off:], f.text)
				if i < 0 {
					break
				}
				from, to := off+i, off+i+len(f.text)
				if f.base64 != "" {
					from, to = widen(l.text, from, to, f.base64)
				}
				hits = append(hits, span{l.at(from), l.at(to)})
				off = off + i + 1
			}
		}
	}
	if len(hits) == 0 {
		return s
	}
	return replaceSpans(s, hits)
}

// widen extends a base64 core's match [from, to) in norm by the partial
// character on each side and any '=' padding after it.
func widen(norm string, from, to int, alphabet string) (int, int) {
	if from > 0 && strings.IndexByte(alphabet, norm[from-1]) >= 0 {
		from--
	}
	if to < len(norm) && strings.IndexByte(alphabet, norm[to]) >= 0 {
		to++
	}
	for to < len(norm) && norm[to] == '=' {
		to++
	}
	return from, to
}

// replaceSpans masks the union of spans in s, each merged run once.
func replaceSpans(s string, spans []span) string {
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		b.WriteString(s[last:from])
		b.WriteString(Mask)
		last = to
	}
	b.WriteString(s[last:])
	return b.String()
}
