package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// omText turns an OpenMetrics 1.0 exposition into the classic text
// format, line by line, for the text parser: expfmt's OpenMetrics
// decoder runs a general ABNF (GLL) parser on every line, 0.5–2 ms a
// line, so a 10,001-bucket histogram cost seconds of CPU a scrape (37.9
// s for a 5 s capture), where the text parser takes tens of
// milliseconds. Each output line stands for the input line of the same
// number (a dropped line is left blank), so the text parser's errors
// name the right line.
//
// What it changes: HELP and UNIT lines and `_created` samples are
// dropped (nothing here uses them); a counter family's TYPE names its
// `_total` sample; gaugehistogram is histogram (`_gcount`, `_gsum` are
// `_count`, `_sum`), stateset is gauge, info is a gauge named `_info`,
// unknown is untyped; timestamps (seconds in OpenMetrics, milliseconds
// in the text format) and exemplars are cut off after the value. The
// exposition must end with `# EOF`, and nothing may follow it.
type omText struct {
	br      *bufio.Reader
	out     []byte
	line    int
	family  string // of the last TYPE line
	typ     string
	eof     bool // # EOF seen
	err     error
	scratch []byte
}

func newOMText(r io.Reader) *omText { return &omText{br: bufio.NewReaderSize(r, 64<<10)} }

// omError is a line the translation itself refuses.
type omError struct {
	Line int
	Msg  string
}

func (e *omError) Error() string { return e.Msg }

func (o *omText) Read(p []byte) (int, error) {
	for len(o.out) == 0 {
		if o.err != nil {
			return 0, o.err
		}
		o.next()
	}
	n := copy(p, o.out)
	o.out = o.out[n:]
	return n, nil
}

// next translates one input line into o.out (or sets o.err).
func (o *omText) next() {
	raw, err := o.br.ReadSlice('\n')
	for err == bufio.ErrBufferFull { // a long line: gather it (the scrape's line bound applies before)
		o.scratch = append(o.scratch[:0], raw...)
		raw, err = o.br.ReadSlice('\n')
		raw = append(o.scratch, raw...)
	}
	if len(raw) == 0 && err != nil {
		if err == io.EOF && !o.eof {
			err = &omError{Line: o.line + 1, Msg: "an OpenMetrics exposition must end with # EOF (cut short?)"}
		}
		o.err = err
		return
	}
	o.line++
	line := bytes.TrimSuffix(raw, []byte("\n"))
	switch {
	case o.eof:
		o.err = &omError{Line: o.line, Msg: "data after # EOF"}
	case string(line) == "# EOF":
		o.eof = true
		o.out = append(o.out[:0], '\n')
	case bytes.HasPrefix(line, []byte("# TYPE ")):
		o.out = o.typeLine(line)
	case len(line) == 0 || line[0] == '#':
		o.out = append(o.out[:0], '\n') // HELP, UNIT (and what the text parser would skip)
	default:
		o.out = o.sample(line)
	}
	if err != nil && err != io.EOF {
		o.err = err
	}
}

// typeLine rewrites "# TYPE name type" for the text parser.
func (o *omText) typeLine(line []byte) []byte {
	f := bytes.Fields(line[len("# TYPE "):])
	if len(f) != 2 {
		return append(append(o.out[:0], line...), '\n') // the text parser names what is wrong
	}
	o.family, o.typ = string(f[0]), string(f[1])
	name, typ := o.family, o.typ
	switch o.typ {
	case "counter":
		name += "_total"
	case "gaugehistogram":
		typ = "histogram"
	case "stateset":
		typ = "gauge"
	case "info":
		name, typ = name+"_info", "gauge"
	case "unknown":
		typ = "untyped"
	}
	return fmt.Appendf(o.out[:0], "# TYPE %s %s\n", name, typ)
}

// sample keeps "name{labels} value" of a sample line, renaming or
// dropping it as its family's type asks.
func (o *omText) sample(line []byte) []byte {
	nameEnd := bytes.IndexAny(line, "{ ")
	if nameEnd < 0 {
		return append(append(o.out[:0], line...), '\n')
	}
	name := string(line[:nameEnd])
	rest := nameEnd
	if line[nameEnd] == '{' {
		end := labelsEnd(line, nameEnd)
		if end < 0 {
			return append(append(o.out[:0], line...), '\n')
		}
		rest = end + 1
	}
	if o.family != "" && len(name) > len(o.family) && name[:len(o.family)] == o.family {
		switch suffix := name[len(o.family):]; {
		case suffix == "_created" && (o.typ == "counter" || o.typ == "histogram" || o.typ == "summary" || o.typ == "gaugehistogram"):
			return append(o.out[:0], '\n')
		case o.typ == "gaugehistogram" && (suffix == "_gcount" || suffix == "_gsum"):
			out := append(o.out[:0], o.family...)
			out = append(out, "_"+suffix[2:]...)
			return o.valueOf(append(out, line[nameEnd:rest]...), line[rest:])
		}
	}
	return o.valueOf(append(o.out[:0], line[:rest]...), line[rest:])
}

// valueOf appends " value\n" of the rest of a sample line (its first
// field: timestamp and exemplar are cut off).
func (o *omText) valueOf(out, rest []byte) []byte {
	f := bytes.Fields(rest)
	if len(f) == 0 {
		return append(append(out, rest...), '\n') // no value: the text parser says so
	}
	out = append(out, ' ')
	return append(append(out, f[0]...), '\n')
}

// labelsEnd is the index of the '}' closing the label set that opens at
// line[open], or -1; quoted values may hold '}', '#' and escaped quotes.
func labelsEnd(line []byte, open int) int {
	quoted := false
	for i := open + 1; i < len(line); i++ {
		switch c := line[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '}':
			return i
		}
	}
	return -1
}
