package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// precompiled is SentencePiece's precompiled_charsmap, the normalizer of
// T5's, XLM-R's and ALBERT's tokenizer.json (Precompiled): a Darts
// double-array trie from UTF-8 byte strings to offsets into a blob of
// NUL-terminated replacements. It is applied as Hugging Face's tokenizers
// applies it (spm_precompiled): per extended grapheme cluster, the
// cluster whole when it is shorter than 6 bytes and has an entry, else
// each character with an entry replaced; an entry is the shortest key
// that is a prefix of the bytes looked up (the rest of them is dropped,
// as there).
type precompiled struct {
	array      []uint32
	normalized string
}

// maxCharsmap bounds a decoded charsmap (T5's and XLM-R's are 237 kB).
const maxCharsmap = 16 << 20

// newPrecompiled decodes the base64 charsmap of a Precompiled normalizer:
// a little-endian uint32 trie size in bytes, the trie's units, then the
// replacements.
func newPrecompiled(file, charsmap string) (normalizeFunc, error) {
	bad := func(why string) error {
		return &UnsupportedError{File: file, What: "a Precompiled normalizer whose precompiled_charsmap " + why}
	}
	if base64.StdEncoding.DecodedLen(len(charsmap)) > maxCharsmap {
		return nil, bad(fmt.Sprintf("is larger than %d bytes", maxCharsmap))
	}
	b, err := base64.StdEncoding.DecodeString(charsmap)
	if err != nil {
		return nil, bad("is not base64")
	}
	if len(b) < 4 {
		return nil, bad("is shorter than its header")
	}
	size := int(binary.LittleEndian.Uint32(b))
	if size%4 != 0 || size == 0 || size > len(b)-4 {
		return nil, bad(fmt.Sprintf("declares a trie of %d bytes in %d", size, len(b)-4))
	}
	p := &precompiled{array: make([]uint32, size/4), normalized: string(b[4+size:])}
	for i := range p.array {
		p.array[i] = binary.LittleEndian.Uint32(b[4+4*i:])
	}
	if !utf8.ValidString(p.normalized) {
		return nil, bad("has replacements that are not UTF-8")
	}
	return p.normalize, nil
}

// normalize is the charsmap applied to s.
func (p *precompiled) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	state := -1
	for s != "" {
		var g string
		g, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		if len(g) < 6 {
			if norm, ok := p.transform(g); ok {
				b.WriteString(norm)
				continue
			}
		}
		for i := 0; i < len(g); {
			_, n := utf8.DecodeRuneInString(g[i:]) // an invalid byte alone
			part := g[i : i+n]
			i += n
			if norm, ok := p.transform(part); ok {
				b.WriteString(norm)
			} else {
				b.WriteString(part)
			}
		}
	}
	return b.String()
}

// transform is the replacement of the shortest key that prefixes chunk.
func (p *precompiled) transform(chunk string) (string, bool) {
	off, ok := p.firstPrefix(chunk)
	if !ok || off >= len(p.normalized) {
		return "", ok && off == len(p.normalized)
	}
	end := strings.IndexByte(p.normalized[off:], 0)
	if end < 0 {
		return p.normalized[off:], true
	}
	return p.normalized[off : off+end], true
}

// firstPrefix walks the double array along key's bytes (up to a NUL) and
// returns the value of the first node with a leaf: Darts'
// commonPrefixSearch, first result. An index out of the array (a broken
// file) ends the walk without a match.
func (p *precompiled) firstPrefix(key string) (int, bool) {
	a := p.array
	if len(a) == 0 {
		return 0, false
	}
	pos := dartsOffset(a[0])
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == 0 {
			break
		}
		pos ^= int(c)
		if pos >= len(a) {
			return 0, false
		}
		unit := a[pos]
		if unit&(1<<31|0xFF) != uint32(c) { // label
			return 0, false
		}
		pos ^= dartsOffset(unit)
		if (unit>>8)&1 == 1 { // has a leaf
			if pos >= len(a) {
				return 0, false
			}
			return int(a[pos] & (1<<31 - 1)), true
		}
	}
	return 0, false
}

func dartsOffset(unit uint32) int { return int((unit >> 10) << ((unit & (1 << 9)) >> 6)) }
