package benchset

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// ReadBench reads Go benchmark text from r; file names it in problems and
// label becomes the .file key of its results. The error is for I/O
// failures and for an input over MaxInputBytes or MaxSamples (a
// *TooLargeError).
func ReadBench(r io.Reader, file, label string) (*Set, error) {
	return readBench(r, file, label, MaxInputBytes)
}

func readBench(r io.Reader, file, label string, limit int64) (*Set, error) {
	data, err := readBounded(r, file, limit)
	if err != nil {
		return nil, err
	}
	s := newSet(file, label)
	screenLines(s, data, file)
	rd := benchfmt.NewReader(nil, file)
	rd.Reset(bytes.NewReader(data), file, ".file", label)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			s.problem(rec.FileName, rec.Line, "%s", rec.Msg)
		case *benchfmt.Result:
			if msg := badValue(rec); msg != "" {
				_, line := rec.Pos()
				s.problem(file, line, "%s: %s", rec.Name.Full(), msg)
				continue
			}
			if len(s.Results) == MaxSamples {
				return nil, &TooLargeError{File: file, What: "samples", Limit: MaxSamples}
			}
			s.Results = append(s.Results, rec.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	for k, v := range rd.Units() {
		s.Units[k] = v
	}
	return s, nil
}

// badValue describes why r cannot be used: no iterations, or a
// measurement that is not a finite, non-negative number; else "".
func badValue(r *benchfmt.Result) string {
	if r.Iters <= 0 {
		// go test never reports a benchmark that ran no iteration: its
		// measurements are not measurements.
		return fmt.Sprintf("ran %d iterations", r.Iters)
	}
	for _, v := range r.Values {
		switch {
		case math.IsNaN(v.Value):
			return fmt.Sprintf("value of %s is NaN", unitOf(v))
		case math.IsInf(v.Value, 0):
			return fmt.Sprintf("value of %s is infinite", unitOf(v))
		case v.Value < 0:
			return fmt.Sprintf("value of %s is negative (%v)", unitOf(v), origValue(v))
		}
	}
	return ""
}

func origValue(v benchfmt.Value) float64 {
	if v.OrigUnit != "" {
		return v.OrigValue
	}
	return v.Value
}

// value builds a measurement in tidied form (ns/op becomes sec/op), as
// benchfmt's reader does, so that synthesized results share tables with
// parsed ones.
func value(v float64, unit string) benchfmt.Value {
	tv, tu := benchunit.Tidy(v, unit)
	if tu == unit {
		return benchfmt.Value{Value: v, Unit: unit}
	}
	return benchfmt.Value{Value: tv, Unit: tu, OrigValue: v, OrigUnit: unit}
}

func unitOf(v benchfmt.Value) string {
	if v.OrigUnit != "" {
		return v.OrigUnit
	}
	return v.Unit
}

// screenLines records the lines benchfmt would skip silently but that mean
// the input cannot be trusted: binary data, and the marks of a failed or
// crashed benchmark run.
func screenLines(s *Set, data []byte, file string) {
	line := 0
	for len(data) > 0 {
		line++
		var text []byte
		text, data, _ = bytes.Cut(data, []byte{'\n'})
		text = bytes.TrimRight(text, "\r")
		switch {
		case !utf8.Valid(text) || bytes.ContainsFunc(text, isControl):
			s.problem(file, line, "unreadable line (binary or control characters)")
		case bytes.HasPrefix(text, []byte("--- FAIL")),
			bytes.Equal(text, []byte("FAIL")),
			bytes.HasPrefix(text, []byte("FAIL\t")),
			bytes.HasPrefix(text, []byte("panic: ")):
			s.problem(file, line, "benchmark run failed: %q", truncate(string(text), 120))
		}
	}
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
