package result

import (
	"fmt"
	"math"
)

// The units a metric may have. Each implies the domain of its values.
const (
	Ms        = "ms"       // milliseconds, ≥ 0
	Seconds   = "s"        // seconds, ≥ 0
	ReqPerS   = "req/s"    // requests per second, ≥ 0
	TxPerS    = "tx/s"     // transactions per second, ≥ 0
	TokPerS   = "tokens/s" // tokens per second, ≥ 0
	Ratio     = "x"        // a ratio of two like non-negative quantities, ≥ 0
	Fraction  = "fraction" // a share in [0, 1]
	Index     = "index"    // a fairness or quality index in [0, 1]
	Count     = "count"    // a count of requests, events, samples, ≥ 0
	MiB       = "MiB"      // mebibytes, ≥ 0
	MsPerMin  = "ms/min"   // a drift slope, any sign
	MiBPerMin = "MiB/min"  // a drift slope, any sign
	PerMin    = "1/min"    // a drift slope of a count, any sign
	Percent   = "%"        // a signed relative change
)

// Domain is the closed range a unit's values live in; an infinite end is
// open.
type Domain struct{ Lo, Hi float64 }

// The three domains.
var (
	NonNegative = Domain{0, math.Inf(1)}
	Unit01      = Domain{0, 1}
	Real        = Domain{math.Inf(-1), math.Inf(1)}
)

var domains = map[string]Domain{
	Ms: NonNegative, Seconds: NonNegative, ReqPerS: NonNegative, TxPerS: NonNegative,
	TokPerS: NonNegative, Ratio: NonNegative, Count: NonNegative, MiB: NonNegative,
	Fraction: Unit01, Index: Unit01,
	MsPerMin: Real, MiBPerMin: Real, PerMin: Real, Percent: Real,
}

// DomainOf returns the domain of unit, and false for an unknown unit.
func DomainOf(unit string) (Domain, bool) {
	d, ok := domains[unit]
	return d, ok
}

// Contains reports whether v is a finite value inside d.
func (d Domain) Contains(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= d.Lo && v <= d.Hi
}

// ContainsClosed reports whether v is inside d, counting an infinite end
// of an unbounded side (an open interval end) as inside.
func (d Domain) ContainsClosed(v float64) bool { return !math.IsNaN(v) && v >= d.Lo && v <= d.Hi }

// Clamp returns v moved into d.
func (d Domain) Clamp(v float64) float64 { return math.Min(math.Max(v, d.Lo), d.Hi) }

// Bounded reports whether d has a finite end.
func (d Domain) Bounded() bool { return !math.IsInf(d.Lo, 0) || !math.IsInf(d.Hi, 0) }

func (d Domain) String() string {
	switch d {
	case NonNegative:
		return "[0, ∞)"
	case Unit01:
		return "[0, 1]"
	case Real:
		return "(−∞, ∞)"
	}
	return fmt.Sprintf("[%g, %g]", d.Lo, d.Hi)
}
