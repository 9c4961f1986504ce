package benchset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
)

// pytestDoc is the part of a pytest-benchmark JSON (benchmark-results.json,
// --benchmark-json) that sagebench reads.
type pytestDoc struct {
	Benchmarks *[]pytestBench `json:"benchmarks"`
}

type pytestBench struct {
	Name     string       `json:"name"`
	Fullname string       `json:"fullname"`
	Group    *string      `json:"group"`
	Stats    *pytestStats `json:"stats"`
	// params and extra_info are not read: decoding them into maps cost
	// gigabytes on a hostile file, and nothing uses them.
}

// pytestStats are pytest-benchmark's statistics, in seconds. Data holds
// the per-round times only when pytest ran with --benchmark-save-data.
type pytestStats struct {
	Min        float64   `json:"min"`
	Max        float64   `json:"max"`
	Mean       *float64  `json:"mean"`
	Stddev     float64   `json:"stddev"`
	Median     float64   `json:"median"`
	IQR        float64   `json:"iqr"`
	Ops        float64   `json:"ops"`
	Rounds     int       `json:"rounds"`
	Iterations int       `json:"iterations"`
	Data       []float64 `json:"data"`
}

// ReadPytest reads a pytest-benchmark JSON from r. Each benchmark becomes
// results named by its name (whitespace replaced by '_'), in sec/op: one
// per round when the file holds stats.data, else one holding stats.mean.
// Its mean and per-round data also land in Set.Summaries, where the gate
// finds them. A benchmark group becomes the "group" configuration key.
// The error is for I/O failures and for an input over MaxInputBytes or
// MaxSamples (a *TooLargeError).
func ReadPytest(r io.Reader, file, label string) (*Set, error) {
	data, err := readBounded(r, file, MaxInputBytes)
	if err != nil {
		return nil, err
	}
	s := newSet(file, label)
	var doc pytestDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		s.problem(file, 0, "decoding pytest-benchmark JSON: %v", err)
		return s, nil
	}
	if doc.Benchmarks == nil {
		s.problem(file, 0, "not a pytest-benchmark JSON: no \"benchmarks\" array")
		return s, nil
	}
	if n := pytestSamples(*doc.Benchmarks); n > MaxSamples {
		return nil, &TooLargeError{File: file, What: "samples", Limit: MaxSamples}
	}
	seen := map[string]int{}
	for i, b := range *doc.Benchmarks {
		name := pytestName(b.Name)
		if prev, dup := seen[name]; dup && name != "" {
			s.problem(file, 0, "benchmarks[%d]: duplicate name %q (first at benchmarks[%d])", i, name, prev)
			continue
		}
		seen[name] = i
		if msg := pytestProblem(b, name); msg != "" {
			s.problem(file, 0, "benchmarks[%d] %q: %s", i, b.Name, msg)
			continue
		}
		addPytest(s, b, name)
	}
	return s, nil
}

// pytestSamples counts the results the benchmarks would become.
func pytestSamples(bs []pytestBench) int {
	n := 0
	for _, b := range bs {
		n++
		if b.Stats != nil && len(b.Stats.Data) > 1 {
			n += len(b.Stats.Data) - 1
		}
	}
	return n
}

// pytestName turns a pytest test name into a benchmark name: benchmark
// text has no whitespace in names.
func pytestName(n string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, n)
}

// pytestProblem says why a benchmark entry cannot be used, or "".
func pytestProblem(b pytestBench, name string) string {
	st := b.Stats
	switch {
	case name == "":
		return "no name"
	case st == nil || st.Mean == nil:
		return "no stats.mean"
	case !finiteNonNeg(*st.Mean):
		return fmt.Sprintf("stats.mean %v is not a finite, non-negative time", *st.Mean)
	case st.Rounds < 1:
		return fmt.Sprintf("stats.rounds %d: no round was measured", st.Rounds)
	case st.Data != nil && len(st.Data) != st.Rounds:
		return fmt.Sprintf("stats.data holds %d values for %d rounds", len(st.Data), st.Rounds)
	}
	for j, v := range st.Data {
		if !finiteNonNeg(v) {
			return fmt.Sprintf("stats.data[%d] %v is not a finite, non-negative time", j, v)
		}
	}
	return ""
}

// finiteNonNeg reports whether v seconds is a usable time, also once
// converted to milliseconds.
func finiteNonNeg(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v*1e3, 0) && v >= 0
}

func addPytest(s *Set, b pytestBench, name string) {
	st := b.Stats
	iters := max(st.Iterations, 1)
	sum := Summary{Rounds: st.Rounds, MeanMs: *st.Mean * 1e3}
	samples := []float64{*st.Mean}
	if len(st.Data) > 0 {
		samples = st.Data
		sum.DataMs = make([]float64, len(st.Data))
		for j, v := range st.Data {
			sum.DataMs[j] = v * 1e3
		}
	}
	for _, v := range samples {
		r := &benchfmt.Result{Name: benchfmt.Name(name), Iters: iters, Values: []benchfmt.Value{value(v, "sec/op")}}
		if b.Group != nil && *b.Group != "" {
			r.SetConfig("group", *b.Group)
		}
		r.SetConfig(".file", s.Label)
		s.Results = append(s.Results, r)
	}
	s.Summaries[name] = sum
}
