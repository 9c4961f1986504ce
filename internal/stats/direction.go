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
// and allocation units (ns/op, sec/op, B/op, allocs/op, *-ms, *-ns) and
// error units (error-ratio, error*, fail*),
// HigherIsBetter for rates and attainment (req/s, MB/s, B/s, */s,
// slo-attainment, goodput, success-rate, throughput), Unknown otherwise.
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
	case "ns/op", "sec/op", "B/op", "allocs/op":
		return LowerIsBetter
	case "MB/s", "B/s", "req/s", "slo-attainment", "goodput", "success-rate", "throughput":
		return HigherIsBetter
	}
	lower := strings.ToLower(unit)
	for _, suf := range []string{"-ms", "-ns", "-us", "-sec", "ms/op", "sec/op", "ns/op", "b/op", "allocs/op"} {
		if strings.HasSuffix(lower, suf) {
			return LowerIsBetter
		}
	}
	for _, pre := range []string{"sec/", "ns/", "ms/"} {
		if strings.HasPrefix(lower, pre) {
			return LowerIsBetter
		}
	}
	if strings.HasPrefix(lower, "error") || strings.HasPrefix(lower, "fail") || strings.HasSuffix(lower, "-errors") {
		return LowerIsBetter
	}
	if strings.HasSuffix(lower, "/s") || strings.HasSuffix(lower, "-attainment") || strings.HasPrefix(lower, "goodput") {
		return HigherIsBetter
	}
	return Unknown
}

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
