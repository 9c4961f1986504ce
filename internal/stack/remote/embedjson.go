package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// embedBody is what the gateway reads of an embeddings response.
type embedBody struct {
	data   []embedItem
	tokens int // usage.prompt_tokens
}

type embedItem struct {
	index int
	vec   []float32
	raw   []byte // the vector's JSON text (decodeEmbeddingsRaw)
}

// decodeEmbeddings parses an OpenAI embeddings response in one pass and
// without reflection: data[].index, data[].embedding (a list of numbers)
// and usage.prompt_tokens; other fields are skipped. The vectors are
// decoded into vals (reused scratch, returned grown) and then copied into
// one slab, so the whole answer costs two allocations. It never accepts
// what encoding/json would refuse or read differently: keys match
// case-insensitively as there, and a repeated key it acts on is an error.
// Like json.Decoder, it reads the first JSON value and ignores the rest.
func decodeEmbeddings(b []byte, vals []float32) (embedBody, []float32, error) {
	d := &embedDecoder{s: scanner{b: b}, vals: vals[:0]}
	if err := d.body(); err != nil {
		return embedBody{}, d.vals, fmt.Errorf("at byte %d: %w", d.s.i, err)
	}
	slab := make([]float32, len(d.vals))
	copy(slab, d.vals)
	for i, r := range d.ranges {
		if r[0] >= 0 {
			d.out.data[i].vec = slab[r[0]:r[1]:r[1]]
		}
	}
	return d.out, d.vals, nil
}

// decodeEmbeddingsRaw is decodeEmbeddings keeping each vector as its JSON
// text (copied out of b into one slab) instead of parsing its numbers: it
// checks their grammar and float32 range only, so it accepts exactly what
// decodeEmbeddings does.
func decodeEmbeddingsRaw(b []byte) (embedBody, error) {
	d := &embedDecoder{s: scanner{b: b}, raw: true}
	if err := d.body(); err != nil {
		return embedBody{}, fmt.Errorf("at byte %d: %w", d.s.i, err)
	}
	n := 0
	for _, r := range d.ranges {
		n += max(r[1]-r[0], 0)
	}
	slab := make([]byte, 0, n)
	for i, r := range d.ranges {
		if r[0] >= 0 {
			slab = append(slab, b[r[0]:r[1]]...)
			d.out.data[i].raw = slab[len(slab)-(r[1]-r[0]) : len(slab) : len(slab)]
		}
	}
	return d.out, nil
}

type embedDecoder struct {
	s      scanner
	raw    bool // keep vectors as text: ranges index s.b
	out    embedBody
	vals   []float32
	ranges [][2]int // each item's vector in vals (or s.b when raw)
}

// body reads {"data":[...],"usage":{...},...}.
func (d *embedDecoder) body() error {
	var seenData, seenUsage, seenTokens bool
	return d.s.object(func(key []byte) error {
		switch {
		case keyIs(key, "data"):
			if seenData {
				return errors.New(`repeated key "data"`)
			}
			seenData = true
			return d.s.array(d.item)
		case keyIs(key, "usage"):
			if seenUsage {
				return errors.New(`repeated key "usage"`)
			}
			seenUsage = true
			return d.s.object(func(key []byte) error {
				if !keyIs(key, "prompt_tokens") {
					return d.s.skip()
				}
				if seenTokens {
					return errors.New(`repeated key "prompt_tokens"`)
				}
				seenTokens = true
				n, err := d.s.int()
				d.out.tokens = n
				return err
			})
		}
		return d.s.skip()
	})
}

// item reads one {"index":N,"embedding":[...],...}; null is refused.
func (d *embedDecoder) item() error {
	var seenIndex, seenVec, null bool
	it := embedItem{}
	start := len(d.vals)
	end := -1
	err := d.s.object(func(key []byte) error {
		switch {
		case keyIs(key, "index"):
			if seenIndex {
				return errors.New(`repeated key "index"`)
			}
			seenIndex = true
			var err error
			it.index, err = d.s.int()
			return err
		case keyIs(key, "embedding"):
			if seenVec {
				return errors.New(`repeated key "embedding"`)
			}
			seenVec, null = true, d.s.peek() == 'n'
			if d.raw {
				start = d.s.i
				err := d.s.array(d.s.checkFloat32)
				end = d.s.i
				return err
			}
			return d.s.array(func() error {
				f, err := d.s.float32()
				d.vals = append(d.vals, f)
				return err
			})
		}
		return d.s.skip()
	})
	if err == nil && !seenVec {
		err = errors.New("data item without embedding")
	}
	d.out.data = append(d.out.data, it)
	r := [2]int{start, len(d.vals)}
	if d.raw {
		r = [2]int{start, end}
	}
	if null { // as encoding/json reads it: no vector
		r = [2]int{-1, -1}
	}
	d.ranges = append(d.ranges, r)
	return err
}

// keyIs matches an object key the way encoding/json matches field names.
func keyIs(key []byte, name string) bool {
	return bytes.EqualFold(key, []byte(name))
}

// scanner is a cursor over JSON text.
type scanner struct {
	b []byte
	i int
}

var errSyntax = errors.New("malformed JSON")

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
