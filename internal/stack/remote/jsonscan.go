package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The decoders of engine answers (decodeEmbeddings, decodeChunk) share
// this scanner: one pass over the bytes, no reflection, the grammar of
// RFC 8259 checked as encoding/json checks it.

// keyIs matches an object key the way encoding/json matches field names.
func keyIs(key []byte, name string) bool {
	return bytes.EqualFold(key, []byte(name))
}

// scanner is a cursor over JSON text.
type scanner struct {
	b []byte
	i int
}

// jsonError is a malformed-JSON error of the scanner.
type jsonError string

func (e jsonError) Error() string { return string(e) }

const errSyntax = jsonError("malformed JSON")

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte (0 at the end).
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) lit(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return errSyntax
	}
	s.i += len(word)
	return nil
}

// object reads {"key": value, ...} calling field for each key, which must
// consume the value; null reads as an empty object.
func (s *scanner) object(field func(key []byte) error) error {
	switch s.peek() {
	case 'n':
		return s.lit("null")
	case '{':
		s.i++
	default:
		return errors.New("want an object")
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return errSyntax
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// array reads [value, ...] calling elem for each; null reads as empty.
func (s *scanner) array(elem func() error) error {
	switch s.peek() {
	case 'n':
		return s.lit("null")
	case '[':
		s.i++
	default:
		return errors.New("want a list")
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// key reads a string; one with escapes is unquoted by encoding/json.
func (s *scanner) key() ([]byte, error) {
	start := s.i
	escaped, err := s.str()
	if err != nil {
		return nil, err
	}
	if !escaped {
		return s.b[start+1 : s.i-1], nil
	}
	var k string
	if err := json.Unmarshal(s.b[start:s.i], &k); err != nil {
		return nil, errSyntax
	}
	return []byte(k), nil
}

// str skips a string (at its opening quote), validating its escapes, and
// reports whether it held any.
func (s *scanner) str() (escaped bool, err error) {
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped, nil
		case c < 0x20:
			return escaped, errSyntax
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return escaped, err
			}
			continue
		}
		s.i++
	}
	return escaped, errSyntax
}

func (s *scanner) escape() error {
	if s.i+1 >= len(s.b) {
		return errSyntax
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		if s.i+6 > len(s.b) {
			return errSyntax
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !isHex(h) {
				return errSyntax
			}
		}
		s.i += 6
		return nil
	}
	return errSyntax
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// maxDepth bounds the nesting of skipped values.
const maxDepth = 1000

// skip reads any one value.
func (s *scanner) skip() error { return s.skipDepth(0) }

func (s *scanner) skipDepth(depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deeply")
	}
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skipDepth(depth + 1) })
	case c == '[':
		return s.array(func() error { return s.skipDepth(depth + 1) })
	case c == '"':
		_, err := s.str()
		return err
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	}
	_, err := s.number()
	return err
}

// num is a JSON number's text and shape.
type num struct {
	text      []byte
	frac, exp bool // has a fraction, an exponent
	intDigits int  // digits before the point
}

// number reads a JSON number. It works on locals, not through s: this is
// the loop a 1024-number vector spends its time in.
func (s *scanner) number() (num, error) {
	s.ws()
	b := s.b[s.i:]
	var n num
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
		n.intDigits = 1
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		d := digits(b[i:])
		i += d
		n.intDigits = d
	default:
		return n, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		d := digits(b[i+1:])
		if d == 0 {
			return n, errSyntax
		}
		i += 1 + d
		n.frac = true
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := digits(b[i:])
		if d == 0 {
			return n, errSyntax
		}
		i += d
		n.exp = true
	}
	n.text = b[:i]
	s.i += i
	return n, nil
}

// digits counts the decimal digits b starts with.
func digits(b []byte) int {
	for i, c := range b {
		if c < '0' || c > '9' {
			return i
		}
	}
	return len(b)
}

// int reads a JSON integer that fits an int.
func (s *scanner) int() (int, error) {
	n, err := s.number()
	if err != nil {
		return 0, err
	}
	if n.frac || n.exp {
		return 0, fmt.Errorf("number %s: want an integer", n.text)
	}
	i, err := strconv.Atoi(string(n.text))
	if err != nil {
		return 0, fmt.Errorf("number %s: out of range", n.text)
	}
	return i, nil
}

// checkFloat32 reads a JSON number and checks that it fits a float32,
// parsing it only when its text leaves that in doubt (an exponent, or 39
// or more integer digits): below 1e38 in plain notation it always fits.
func (s *scanner) checkFloat32() error {
	n, err := s.number()
	if err != nil || !n.exp && n.intDigits < 39 {
		return err
	}
	if _, err := strconv.ParseFloat(string(n.text), 32); err != nil {
		return fmt.Errorf("number %s: out of float32 range", n.text)
	}
	return nil
}

// float32 reads a JSON number that fits a float32.
func (s *scanner) float32() (float32, error) {
	n, err := s.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(n.text), 32)
	if err != nil {
		return 0, fmt.Errorf("number %s: out of float32 range", n.text)
	}
	return float32(f), nil
}

// string reads a JSON string (null reads as ""); one with escapes or
// invalid UTF-8 is unquoted by encoding/json, for the same text.
func (s *scanner) string() (string, error) {
	switch s.peek() {
	case 'n':
		return "", s.lit("null")
	case '"':
	default:
		return "", errors.New("want a string")
	}
	start := s.i
	escaped, err := s.str()
	if err != nil {
		return "", err
	}
	raw := s.b[start+1 : s.i-1]
	if !escaped && utf8.Valid(raw) {
		return string(raw), nil
	}
	var out string
	if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
		return "", errSyntax
	}
	return out, nil
}
