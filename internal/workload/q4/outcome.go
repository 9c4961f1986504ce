package q4

import (
	"fmt"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// outcome writes the frontier table, the per-scale metrics, bench lines
// and rows, and the primary metric: the scaling efficiency at the
// largest scale measured, rate(n) ÷ (n · rate(1)).
func (q *q4) outcome(out *workload.Outcome, fs []Frontier) {
	out.Extra, out.Bench = map[string]float64{}, []record.BenchLine{}
	var tbl strings.Builder
	tbl.WriteString("| engines | max rate req/s | goodput req/s | p99 TTFT ms | p99 E2E ms | efficiency | probes | verdict |\n|---|---|---|---|---|---|---|---|\n")
	var base float64
	for i, f := range fs {
		key := fmt.Sprintf("engines=%d", f.Engines)
		if f.Engines == 0 {
			key = "engines=target"
		}
		eff := math.NaN()
		if i == 0 && f.Engines == 1 && !f.DriverBound { // a driver-bound rate(1) is only a lower bound
			base = f.MaxRate
		}
		if base > 0 && f.Engines > 0 && !f.DriverBound {
			eff = f.MaxRate / (float64(f.Engines) * base)
		}
		x := out.Extra
		x[key+".max_rate"], x[key+".probes"], x[key+".goodput"] = f.MaxRate, float64(len(f.Probes)), f.Best.Goodput
		x[key+".ttft_p99_ms"], x[key+".e2e_p99_ms"], x[key+".efficiency"] = f.Best.TTFTP99, f.Best.E2EP99, eff
		x["max_rate"] = f.MaxRate
		if !math.IsNaN(eff) && f.Engines > 1 {
			x["primary"] = eff
		}
		fmt.Fprintf(&tbl, "| %s | %.2f | %.2f | %s | %s | %s | %d | %s |\n", strings.TrimPrefix(key, "engines="), f.MaxRate, f.Best.Goodput,
			num(f.Best.TTFTP99), num(f.Best.E2EP99), num(eff), len(f.Probes), verdict(f))
		if f.MaxRate > 0 {
			out.Bench = append(out.Bench, record.BenchLine{Name: key, N: f.Best.Requests, Values: []record.BenchValue{
				{Value: f.MaxRate, Unit: "max-req/s"}, {Value: f.Best.Goodput, Unit: "goodput-req/s"},
				{Value: f.Best.TTFTP99, Unit: "ttft-p99-ms"}, {Value: f.Best.E2EP99, Unit: "p99-ms"}}})
		}
		out.Rows = append(out.Rows, workload.Row{Config: key, Throughput: f.Best.Goodput, LatencyP99: f.Best.E2EP99,
			SuccessRate: f.Best.Success, DurationSeconds: q.cfg.Probe.Seconds(),
			Metadata: map[string]any{"engines": f.Engines, "max_rate": f.MaxRate, "efficiency": finite(eff), "probes": f.Probes,
				"driver_bound": f.DriverBound, "bracketed": f.Bracketed}})
	}
	for k, v := range out.Extra {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(out.Extra, k)
		}
	}
	var probes strings.Builder
	probes.WriteString("| probe | rate req/s | requests | success | p99 TTFT ms | p99 E2E ms | lag p99 ms | verdict |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range fs {
		for _, p := range f.Probes {
			v := "pass"
			if !p.Pass {
				v = "fail: " + p.Reason
			}
			fmt.Fprintf(&probes, "| %s | %.2f | %d | %.3f | %s | %s | %s | %s |\n", p.Phase, p.Rate, p.Requests, p.Success, num(p.TTFTP99), num(p.E2EP99), num(p.LagP99), v)
		}
	}
	out.Sections = append(out.Sections, workload.Section{Title: "Frontier", Body: tbl.String()},
		workload.Section{Title: "Probes", Body: probes.String()})
}

// verdict says how a scale's search ended.
func verdict(f Frontier) string {
	switch {
	case f.DriverBound:
		return fmt.Sprintf("driver-bound at %.2f req/s (no SUT figure above)", f.DriverRate)
	case f.Interrupted:
		return "interrupted"
	case f.MaxRate == 0:
		return "no rate met the SLO"
	case !f.Bracketed:
		return "≥ max rate (probe budget spent before a failure)"
	}
	return "bracketed"
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
