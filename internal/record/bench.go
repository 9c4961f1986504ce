package record

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// BenchHeader is the configuration block that opens a bench.txt, as
// `go test -bench` prints it.
type BenchHeader struct {
	GOOS, GOARCH, Pkg, CPU string
}

// BenchValue is one measurement of a benchmark line, e.g. 12.5 p99-ms.
type BenchValue struct {
	Value float64
	Unit  string
}

// BenchLine is one result line: name (without the "Benchmark" prefix),
// iteration count and values. Name path elements are key=value pairs
// separated by '/', as in BenchmarkQ2ControlMix/backend=sage/policy=fifo.
type BenchLine struct {
	Name   string
	N      int
	Values []BenchValue
}

// WriteBench writes hdr and lines in the Go benchmark format, readable by
// benchstat and golang.org/x/perf/benchfmt.
func WriteBench(w io.Writer, hdr BenchHeader, lines []BenchLine) error {
	var b strings.Builder
	for _, kv := range [][2]string{{"goos", hdr.GOOS}, {"goarch", hdr.GOARCH}, {"pkg", hdr.Pkg}, {"cpu", hdr.CPU}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], oneLine(kv[1]))
		}
	}
	for _, l := range lines {
		n := l.N
		if n < 1 {
			n = 1 // benchfmt needs a positive iteration count
		}
		fmt.Fprintf(&b, "Benchmark%s %d", benchName(l.Name), n)
		for _, v := range l.Values {
			if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
				continue // benchstat cannot read them
			}
			fmt.Fprintf(&b, " %s %s", strconv.FormatFloat(v.Value, 'g', 6, 64), v.Unit)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName keeps a benchmark name on one field: whitespace becomes '_'.
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, s)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
