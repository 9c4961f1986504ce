package reqset

import (
	"math"

	"github.com/sagebench/sagebench/internal/record"
)

// BenchLine is the bench.txt line of a selection measured over secs
// seconds: mean E2E as ns/op, p50 and p99 E2E, p99 TTFT and queue wait
// when measured, SLO attainment, goodput and the error ratio when there
// were errors. ok is false when nothing succeeded (nothing to report).
//
// The E2E and TTFT quantiles count a failed request as +∞ (Stats.TailPxx,
// TTFTTailP99): one that failures reach is +∞, which the format cannot
// carry, so it is left out of the line — never replaced by the
// successes' figure; error-ratio says why.
func BenchLine(name string, rs []record.Request, secs float64) (line record.BenchLine, ok bool) {
	s := Measure(rs)
	if s.OK == 0 {
		return record.BenchLine{}, false
	}
	v := []record.BenchValue{{Value: s.E2EMean * 1e6, Unit: "ns/op"}}
	for _, x := range []record.BenchValue{{Value: s.TailP50, Unit: "p50-ms"}, {Value: s.TailP99, Unit: "p99-ms"},
		{Value: s.TTFTTailP99, Unit: "ttft-p99-ms"}, {Value: s.QueueP99, Unit: "queue-p99-ms"}} {
		if !math.IsNaN(x.Value) && !math.IsInf(x.Value, 0) {
			v = append(v, x)
		}
	}
	v = append(v, record.BenchValue{Value: s.SLOAttainment, Unit: "slo-attainment"})
	if secs > 0 {
		v = append(v, record.BenchValue{Value: float64(s.Met) / secs, Unit: "goodput-req/s"})
	}
	if s.OK < s.N {
		v = append(v, record.BenchValue{Value: float64(s.N-s.OK) / float64(s.N), Unit: "error-ratio"})
	}
	return record.BenchLine{Name: name, N: s.N, Values: v}, true
}

// IsType selects requests of type t.
func IsType(t string) func(*record.Request) bool {
	return func(r *record.Request) bool { return r.Type == t }
}

// IsPriority selects requests of priority p.
func IsPriority(p string) func(*record.Request) bool {
	return func(r *record.Request) bool { return r.Priority == p }
}

// IsTenant selects requests of tenant t.
func IsTenant(t string) func(*record.Request) bool {
	return func(r *record.Request) bool { return r.Tenant == t }
}
