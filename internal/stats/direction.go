package stats

import (
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Direction values.
const (
	HigherIsBetter = 1
	LowerIsBetter  = -1
	Unknown        = 0
)

// Direction says which way unit improves: LowerIsBetter for time, latency
// and allocation units (ns/op, sec/op, B/op, B/stream, allocs/op, *-ms,
// *-ns, *-us, *-µs, cpu-ns/record, us/doc), error units (error-ratio,
// error*, fail*) and late-steps; HigherIsBetter for rates and attainment
// (req/s, MB/s, B/s, */s, slo-attainment, goodput, success-rate,
// throughput, recall*); Unknown otherwise.
// A better=higher|lower declaration in the input's unit metadata wins.
func Direction(unit string, meta benchfmt.UnitMetadataMap) int {
	if meta != nil {
		if m := meta.Get(unit, "better"); m != nil {
			switch m.Value {
			case "higher":
				return HigherIsBetter
			case "lower":
				return LowerIsBetter
			}
		}
	}
	return builtinDirection(unit)
}

func builtinDirection(unit string) int {
	switch unit {
	case "ns/op", "sec/op", "B/op", "allocs/op", "late-steps":
		return LowerIsBetter
	case "MB/s", "B/s", "req/s", "slo-attainment", "goodput", "success-rate", "throughput":
		return HigherIsBetter
	}
	lower := strings.ToLower(unit)
	num, den, perSomething := strings.Cut(lower, "/")
	last := num[strings.LastIndexByte(num, '-')+1:] // "ms" of "ttft-p99-ms"
	switch {
	case timeUnits[last]: // p99-ms, hop-p99-µs, cpu-ns/record, us/doc
		return LowerIsBetter
	case strings.HasPrefix(lower, "error") || strings.HasPrefix(lower, "fail") || strings.HasSuffix(lower, "-errors"):
		return LowerIsBetter
	case timeUnits[den]: // req/s, records/s, B/s
		return HigherIsBetter
	case perSomething && sizeUnits[last]: // B/op, B/stream, allocs/op
		return LowerIsBetter
	case strings.HasSuffix(lower, "-attainment") || strings.HasPrefix(lower, "goodput") || strings.HasPrefix(lower, "recall"):
		return HigherIsBetter
	}
	return Unknown
}

// timeUnits are the time units a unit's numerator or denominator can be
// (µ as micro sign and as Greek mu).
var timeUnits = map[string]bool{"ns": true, "us": true, "\u00b5s": true, "\u03bcs": true, "ms": true, "s": true, "sec": true}

// sizeUnits are the numerators of per-something cost units.
var sizeUnits = map[string]bool{"b": true, "kb": true, "mb": true, "gb": true, "bytes": true, "allocs": true}

// Worse reports whether going from base to cur is a change for the worse
// in a unit of direction dir. It is false for Unknown.
func Worse(dir int, base, cur float64) bool {
	switch dir {
	case LowerIsBetter:
		return cur > base
	case HigherIsBetter:
		return cur < base
	}
	return false
}
