package presenter

import (
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// BenchLines are the run's bench.txt lines: the workload's own (own,
// when it gave any), prefixed with the benchmark stem and backend, or
// else one line per configuration (phase and request type) with
// successes, e.g.
// BenchmarkQ2ControlMix/backend=sage/policy=fifo/type=llm N <mean e2e> ns/op …
func BenchLines(r Run, own []record.BenchLine) []record.BenchLine {
	stem := r.Spec.BenchName() + "/backend=" + r.Record.Backend
	if own != nil {
		out := make([]record.BenchLine, 0, len(own))
		for _, l := range own {
			l.Name = stem + "/" + l.Name
			out = append(out, l)
		}
		return out
	}
	var lines []record.BenchLine
	for _, g := range r.configGroups() {
		if g.Count == g.Errors {
			continue // nothing measured
		}
		name := stem
		d := r.phasesDuration("")
		if phase, ok := g.Labels[summary.LabelPhase]; ok {
			name += "/" + r.phaseKey() + "=" + phase
			d = r.phasesDuration(phase)
		}
		rate := 0.0
		if d > 0 {
			rate = float64(g.Count-g.Errors) / d.Seconds()
		}
		lines = append(lines, record.BenchLine{Name: name + "/type=" + g.Labels[summary.LabelType],
			N: g.Count, Values: benchValues(g, rate)})
	}
	return lines
}

// benchValues are g's values. The latency quantiles count a failed
// request as +∞ (summary.Quantile): a quantile that is not an exact
// number — +∞ when failures reach its rank, or a bracket — is left out
// of the line (the format has no +∞, and the successes' figure is not
// the quantile); error-ratio says why.
func benchValues(g record.Group, rate float64) []record.BenchValue {
	v := []record.BenchValue{{Value: g.E2E.Mean * 1e6, Unit: "ns/op"}}
	exact := func(m result.Metric, unit string) {
		if x, ok := tailValue(m); ok {
			v = append(v, record.BenchValue{Value: x, Unit: unit})
		}
	}
	exact(tail(0.5, g.E2E, g.Count), "p50-ms")
	exact(tail(0.99, g.E2E, g.Count), "p99-ms")
	v = append(v, record.BenchValue{Value: rate, Unit: "req/s"},
		record.BenchValue{Value: g.Goodput, Unit: "goodput-req/s"},
		record.BenchValue{Value: g.SLOAttainment, Unit: "slo-attainment"})
	if g.TTFT.Count > 0 {
		exact(groupTTFT(0.99, g), "ttft-p99-ms")
	}
	if g.Errors > 0 {
		v = append(v, record.BenchValue{Value: float64(g.Errors) / float64(g.Count), Unit: "error-ratio"})
	}
	return v
}
