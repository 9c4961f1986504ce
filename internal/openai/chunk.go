package openai

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// fastChunk decodes the usual shape of a chat.completion.chunk without
// reflection and without allocating (ch is reused, its byte slices point
// into data): it reads choices[].delta.content, .reasoning_content and
// .reasoning, choices[].finish_reason, usage.prompt_tokens,
// usage.completion_tokens and whether "error" is non-null, and skips
// everything else. It returns false whenever the input is not plainly in
// that shape (or not plainly valid JSON); the caller then decodes with
// encoding/json, which has the final word, so this is only a fast path.
func fastChunk(data []byte, ch *chunk) bool {
	ch.reset()
	sc := scanner{b: data}
	var seenChoices, seenUsage bool // repeated keys: leave encoding/json's merge rules to it
	ok := sc.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			if seenChoices {
				return false
			}
			seenChoices = true
			return sc.choices(ch)
		case "usage":
			if seenUsage {
				return false
			}
			seenUsage = true
			return sc.usage(ch)
		case "error":
			start := sc.i
			if !sc.skip() {
				return false
			}
			ch.err = data[start:sc.i]
			return true
		}
		return !foldsTo(key, "choices", "usage", "error") && sc.skip()
	})
	sc.ws()
	return ok && sc.i == len(sc.b)
}

// maxScanDepth bounds the nesting fastChunk walks (recursively); deeper
// input goes to encoding/json, whose scanner is iterative and bounded.
const maxScanDepth = 32

type scanner struct {
	b     []byte
	i     int
	depth int // objects and arrays open
}

// enter opens an object or array; false past maxScanDepth.
func (s *scanner) enter(open byte) bool {
	if s.depth >= maxScanDepth || !s.eat(open) {
		return false
	}
	s.depth++
	return true
}

// leave closes an object or array when close is next.
func (s *scanner) leave(close byte) bool {
	if !s.eat(close) {
		return false
	}
	s.depth--
	return true
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// eat consumes c after optional white space.
func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object walks an object, calling member for each key; member must
// consume the value.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.enter('{') {
		return false
	}
	if s.leave('}') {
		return true
	}
	for {
		s.ws()
		key, escaped, ok := s.str()
		if !ok || escaped || !s.eat(':') {
			return false
		}
		s.ws()
		if !member(key) {
			return false
		}
		if s.leave('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// array walks an array, calling elem for each element.
func (s *scanner) array(elem func() bool) bool {
	if !s.enter('[') {
		return false
	}
	if s.leave(']') {
		return true
	}
	for {
		s.ws()
		if !elem() {
			return false
		}
		if s.leave(']') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// str reads a string at s.i, returning its raw content.
func (s *scanner) str() (raw []byte, escaped, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], escaped, true
		case c == '\\':
			escaped = true
			j++
			if j >= len(s.b) || !validEscape(s.b[j:]) {
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// skip consumes any value.
func (s *scanner) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	}
	_, ok := s.number()
	return ok
}

func (s *scanner) lit(w string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		s.i += len(w)
		return true
	}
	return false
}

// number reads a JSON number (RFC 8259 grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
func (s *scanner) number() ([]byte, bool) {
	start := s.i
	s.lit("-")
	switch {
	case s.lit("0"):
	case s.digits() == 0:
		return nil, false
	}
	if s.lit(".") && s.digits() == 0 {
		return nil, false
	}
	if s.lit("e") || s.lit("E") {
		_ = s.lit("+") || s.lit("-")
		if s.digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// choices reads the choices array; like encoding/json, null empties it,
// and a repeated key within a choice or delta replaces the earlier value.
func (s *scanner) choices(ch *chunk) bool {
	ch.choices = ch.choices[:0]
	if s.lit("null") {
		return true
	}
	return s.array(func() bool {
		var d choice
		ok := s.object(func(key []byte) bool {
			switch string(key) {
			case "delta":
				return s.delta(&d)
			case "finish_reason":
				return s.finishReason(&d)
			}
			return !foldsTo(key, "delta", "finish_reason") && s.skip()
		})
		ch.choices = append(ch.choices, d)
		return ok
	})
}

// delta reads a choice's delta (null leaves it as it was, as
// encoding/json does for a struct).
func (s *scanner) delta(d *choice) bool {
	if s.lit("null") {
		return true
	}
	return s.object(func(key []byte) bool {
		var dst *jstr
		switch string(key) {
		case "content":
			dst = &d.content
		case "reasoning_content":
			dst = &d.reasoningContent
		case "reasoning":
			dst = &d.reasoning
		default:
			return !foldsTo(key, "content", "reasoning_content", "reasoning") && s.skip()
		}
		if s.lit("null") {
			return true
		}
		v, ok := s.jstr()
		*dst = v
		return ok
	})
}

// finishReason reads finish_reason: null or a string.
func (s *scanner) finishReason(d *choice) bool {
	if s.lit("null") {
		d.finish = false
		return true
	}
	v, ok := s.jstr()
	d.finish = ok && !v.empty()
	return ok
}

// jstr reads a string value without decoding it: its raw content when it
// is plain valid UTF-8, else the quoted JSON text (decoded on demand).
func (s *scanner) jstr() (jstr, bool) {
	raw, escaped, ok := s.str()
	if !ok {
		return jstr{}, false
	}
	if !escaped && utf8.Valid(raw) {
		return jstr{b: raw}, true
	}
	return jstr{b: s.b[s.i-len(raw)-2 : s.i], quoted: true}, true
}

func (s *scanner) usage(ch *chunk) bool {
	if s.lit("null") {
		ch.hasUsage = false
		return true
	}
	ch.hasUsage = true
	u := &ch.usage
	return s.object(func(key []byte) bool {
		var dst *int
		switch string(key) {
		case "prompt_tokens":
			dst = &u.PromptTokens
		case "completion_tokens":
			dst = &u.CompletionTokens
		default:
			return !foldsTo(key, "prompt_tokens", "completion_tokens") && s.skip()
		}
		raw, ok := s.number()
		if !ok {
			return false
		}
		n, err := strconv.Atoi(string(raw))
		*dst = n
		return err == nil
	})
}

// validEscape checks the character(s) after a backslash.
func validEscape(b []byte) bool {
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(b) < 5 {
			return false
		}
		for _, h := range b[1:5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// foldsTo reports whether key matches one of names case-insensitively
// (encoding/json would then fill the field, so the fast path gives up).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}
