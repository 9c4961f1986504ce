package strictyaml

import "bytes"

// nestScan estimates, line by line and in one pass, how deep a YAML
// document nests collections: enclosing block indentation levels, compact
// entries ("- - x", "? x") and open flow brackets ("[", "{"). Quoted
// scalars, comments and block scalars (| and >) are skipped so that
// brackets in text do not count. It over- or under-counts by a level on
// odd layouts, which a cap of 64 absorbs; what matters is that every
// construct that can nest without bound is counted.
type nestScan struct {
	indents      []int // indents of the enclosing block collections
	flow         int   // open flow brackets
	quote        byte  // quote character of a scalar left open at the end of a line
	scalarIndent int   // ≥ 0 while skipping the lines of a block scalar
}

// maxNesting returns the deepest nesting found in data and its 1-based
// line, stopping at the first line deeper than limit.
func maxNesting(data []byte, limit int) (depth, line int) {
	s := nestScan{scalarIndent: -1}
	for n := 1; len(data) > 0; n++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if d := s.line(bytes.TrimRight(l, "\r")); d > depth {
			depth, line = d, n
			if depth > limit {
				break
			}
		}
	}
	return depth, line
}

func (s *nestScan) line(l []byte) int {
	if s.flow > 0 || s.quote != 0 {
		return len(s.indents) + s.scanFlow(l, 0)
	}
	indent := 0
	for indent < len(l) && l[indent] == ' ' {
		indent++
	}
	if rest := bytes.TrimSpace(l[indent:]); len(rest) == 0 || rest[0] == '#' {
		return 0
	}
	if s.scalarIndent >= 0 {
		if indent > s.scalarIndent {
			return 0
		}
		s.scalarIndent = -1
	}
	for len(s.indents) > 0 && s.indents[len(s.indents)-1] > indent {
		s.indents = s.indents[:len(s.indents)-1]
	}
	if len(s.indents) == 0 || s.indents[len(s.indents)-1] < indent {
		s.indents = append(s.indents, indent)
	}
	depth, i := len(s.indents), indent
	for i < len(l) && (l[i] == '-' || l[i] == '?') && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t') {
		depth++
		i = skipBlank(l, i+1)
	}
	return depth + s.scanNode(l, i, indent)
}

// scanNode scans a block-context line from a position where a node may
// start and returns the flow depth reached on it.
func (s *nestScan) scanNode(l []byte, i, indent int) int {
	for i < len(l) {
		switch c := l[i]; c {
		case '[', '{':
			return s.scanFlow(l, i)
		case '"', '\'':
			end, closed := quoteEnd(l, i+1, c)
			if !closed {
				s.quote = c
				return 0
			}
			i = end
		case '|', '>':
			s.scalarIndent = indent
			return 0
		case '#':
			return 0
		case '&', '!', '*':
			for i < len(l) && l[i] != ' ' && l[i] != '\t' {
				i++
			}
			i = skipBlank(l, i)
			continue
		}
		// A plain scalar or the end of a token: a value may follow ": ".
		next := bytes.Index(l[i:], []byte(": "))
		if c := bytes.Index(l[i:], []byte(" #")); c >= 0 && (next < 0 || c < next) {
			return 0
		}
		if next < 0 {
			return 0
		}
		i = skipBlank(l, i+next+2)
	}
	return 0
}

// scanFlow scans flow content from i (continuing an open quote first),
// updates the open bracket count and returns the deepest count reached.
func (s *nestScan) scanFlow(l []byte, i int) int {
	if s.quote != 0 {
		end, closed := quoteEnd(l, i, s.quote)
		if !closed {
			return s.flow
		}
		s.quote, i = 0, end
	}
	deepest := s.flow
	for ; i < len(l); i++ {
		switch c := l[i]; c {
		case '[', '{':
			s.flow++
			deepest = max(deepest, s.flow)
		case ']', '}':
			s.flow = max(s.flow-1, 0)
		case '"', '\'':
			end, closed := quoteEnd(l, i+1, c)
			if !closed {
				s.quote = c
				return deepest
			}
			i = end - 1
		case '#':
			if i == 0 || l[i-1] == ' ' || l[i-1] == '\t' {
				return deepest
			}
		}
	}
	return deepest
}

// quoteEnd returns the index just past the quote q closing a scalar that
// starts at i, and whether it closed on this line.
func quoteEnd(l []byte, i int, q byte) (int, bool) {
	for ; i < len(l); i++ {
		switch {
		case q == '"' && l[i] == '\\':
			i++
		case l[i] == q && q == '\'' && i+1 < len(l) && l[i+1] == '\'':
			i++
		case l[i] == q:
			return i + 1, true
		}
	}
	return len(l), false
}

func skipBlank(l []byte, i int) int {
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return i
}
