package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizeFunc is one normalizer of a tokenizer.json, applied to each
// segment of text between added tokens.
type normalizeFunc func(string) string

// normalizers builds the chain a tokenizer.json's normalizer describes:
// NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, Prepend,
// BertNormalizer, Precompiled (a SentencePiece charsmap), and Sequences
// of them. Nmt is refused.
func normalizers(file string, c *hfComponent) ([]normalizeFunc, error) {
	if c == nil {
		return nil, nil
	}
	switch c.Type {
	case "Sequence":
		var out []normalizeFunc
		for i := range c.Normalizers {
			fs, err := normalizers(file, &c.Normalizers[i])
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
	case "NFC":
		return []normalizeFunc{norm.NFC.String}, nil
	case "NFD":
		return []normalizeFunc{norm.NFD.String}, nil
	case "NFKC":
		return []normalizeFunc{compat(norm.NFKC)}, nil
	case "NFKD":
		return []normalizeFunc{compat(norm.NFKD)}, nil
	case "Lowercase":
		return []normalizeFunc{lowercase}, nil
	case "StripAccents":
		return []normalizeFunc{stripAccents}, nil
	case "Strip":
		return []normalizeFunc{stripper(c.Left, c.Right)}, nil
	case "Prepend":
		return []normalizeFunc{func(s string) string {
			if s == "" {
				return s
			}
			return c.Prepend + s
		}}, nil
	case "Replace":
		f, err := replacer(file, c)
		return []normalizeFunc{f}, err
	case "BertNormalizer":
		return []normalizeFunc{bertNormalizer(c)}, nil
	case "Precompiled":
		f, err := newPrecompiled(file, c.PrecompiledCharsmap)
		return []normalizeFunc{f}, err
	}
	return nil, &UnsupportedError{File: file, What: fmt.Sprintf("normalizer %q", c.Type)}
}

// compat is NFKC or NFKD as tokenizers' tables (before Unicode 13) have
// it: the characters given compatibility decompositions since (segmented
// digits, modifier letters of Latin Extended-F and Cyrillic Extended-D)
// stay as they are.
func compat(f norm.Form) normalizeFunc {
	return func(s string) string {
		if !strings.ContainsFunc(s, newCompat) {
			return f.String(s)
		}
		var b strings.Builder
		for s != "" {
			i := strings.IndexFunc(s, newCompat)
			if i < 0 {
				i = len(s)
			}
			b.WriteString(f.String(s[:i]))
			if i == len(s) {
				break
			}
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			s = s[i+n:]
		}
		return b.String()
	}
}

func newCompat(r rune) bool {
	return (r >= 0x10780 && r <= 0x107BA) || (r >= 0x1E030 && r <= 0x1E06D) || (r >= 0x1FBF0 && r <= 0x1FBF9) ||
		(r >= 0xA7F2 && r <= 0xA7F4) || r == 0xAB69
}

// lowercase is Rust's char::to_lowercase applied per character (no final
// sigma rule; İ becomes i and a combining dot, as Unicode's
// SpecialCasing says).
func lowercase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// stripAccents removes the non-spacing marks (Mn, in the Unicode 9.0
// tables Hugging Face's tokenizers has), as StripAccents does; it is
// meant to follow NFD.
func stripAccents(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(hfMn, r) {
			return -1
		}
		return r
	}, s)
}

func stripper(left, right bool) normalizeFunc {
	return func(s string) string {
		if left {
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
		}
		if right {
			s = strings.TrimRightFunc(s, unicode.IsSpace)
		}
		return s
	}
}

func replacer(file string, c *hfComponent) (normalizeFunc, error) {
	if s, ok := c.Pattern["String"]; ok {
		if s == "" {
			return nil, &UnsupportedError{File: file, What: "a Replace of the empty string"}
		}
		return func(t string) string { return strings.ReplaceAll(t, s, c.Content) }, nil
	}
	pat, ok := c.Pattern["Regex"]
	if !ok {
		return nil, &UnsupportedError{File: file, What: "a Replace without a Regex or String pattern"}
	}
	re, err := compile(file, pat)
	if err != nil {
		return nil, err
	}
	return func(t string) string {
		out, err := re.Replace(t, strings.ReplaceAll(c.Content, "$", "$$"), -1, -1)
		if err != nil {
			return t // a match timeout: leave the text as it is
		}
		return out
	}, nil
}

// bertNormalizer is BERT's: clean the text (drop NUL, U+FFFD and control
// characters, whitespace to a space), pad CJK ideographs with spaces,
// strip accents (by default when lowercasing), lowercase.
func bertNormalizer(c *hfComponent) normalizeFunc {
	clean := c.CleanText == nil || *c.CleanText
	chinese := c.HandleChineseChars == nil || *c.HandleChineseChars
	lower := c.Lowercase == nil || *c.Lowercase
	strip := lower
	if c.StripAccents != nil {
		strip = *c.StripAccents
	}
	return func(s string) string {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			switch {
			case clean && (r == 0 || r == 0xFFFD || bertControl(r)):
			case clean && bertSpace(r):
				b.WriteByte(' ')
			case chinese && isCJK(r):
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
			default:
				b.WriteRune(r)
			}
		}
		s = b.String()
		if strip {
			s = stripAccents(norm.NFD.String(s))
		}
		if lower {
			s = lowercase(s)
		}
		return s
	}
}

func bertSpace(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r) }

// bertControl is Cc, Cf and Co (Unicode 9.0, as tokenizers has them) but
// tab, newline and carriage return.
func bertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.Is(hfControl, r) || (r >= 0xE000 && r <= 0xF8FF) || (r >= 0xF0000 && r <= 0xFFFFD) || (r >= 0x100000 && r <= 0x10FFFD)
}

// isCJK is BERT's CJK ideograph test.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
