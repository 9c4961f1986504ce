package reqset

import (
	"math"

	"github.com/sagebench/sagebench/internal/record"
)

// BenchLine is the bench.txt line of a selection measured over secs
// seconds: mean E2E as ns/op, p50 and p99 E2E, p99 TTFT and queue wait
// when measured, SLO attainment, goodput and the error ratio when there
// were errors. ok is false when nothing succeeded (nothing to report).
func BenchLine(name string, rs []record.Request, secs float64) (line record.BenchLine, ok bool) {
	s := Measure(rs)
	if s.OK == 0 {
		return record.BenchLine{}, false
	}
	v := []record.BenchValue{{Value: s.E2EMean * 1e6, Unit: "ns/op"}, {Value: s.E2EP50, Unit: "p50-ms"}, {Value: s.E2EP99, Unit: "p99-ms"}}
	for _, x := range []record.BenchValue{{Value: s.TTFTP99, Unit: "ttft-p99-ms"}, {Value: s.QueueP99, Unit: "queue-p99-ms"}} {
		if !math.IsNaN(x.Value) {
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
