package q2

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Q2's metrics; the per-policy ones are named "<policy>.<name>".
var (
	defBestCritTTFT = result.Def{Name: "best_critical_ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defCritTTFT     = result.Def{Name: "critical_ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defCritSLO      = result.Def{Name: "critical_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defGoodput      = result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}
	defSLO          = result.Def{Name: "slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defBusy         = result.Def{Name: "llm_queue_busy", Unit: result.Fraction, Direction: result.Lower}
	defDepthMean    = result.Def{Name: "llm_queue_depth_mean", Unit: result.Count, Direction: result.Lower}
	defDepthMax     = result.Def{Name: "llm_queue_depth_max", Unit: result.Count, Direction: result.Lower}
	defCritQueue    = result.Def{Name: "critical_queue_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// defs are the metrics a q2.target may name.
var defs = []result.Def{defBestCritTTFT}

// policyFigures are one policy's figures, pooled over its rounds.
type policyFigures struct {
	policy    string
	critTTFT  result.Metric
	critSLO   result.Metric
	byClass   map[string]result.Metric // p99 TTFT per class
	goodput   result.Metric
	slo       result.Metric
	busy      result.Metric
	depthMean result.Metric
	depthMax  result.Metric
	critQueue result.Metric
	rounds    []float64 // critical p99 TTFT of each round (NaN: none)
	row       workload.Row
}

// named returns m renamed "<policy>.<name>".
func (f policyFigures) named(m result.Metric) result.Metric {
	m.Name = f.policy + "." + m.Name
	return m
}

// metrics are the policy's metrics, named after it.
func (f policyFigures) metrics() []result.Metric {
	var out []result.Metric
	for _, m := range []result.Metric{f.critTTFT, f.critSLO, f.goodput, f.slo, f.busy, f.depthMean, f.depthMax, f.critQueue} {
		out = append(out, f.named(m))
	}
	return out
}

// policyResult pools a policy's rounds into its figures and unified row.
func (q *q2) policyResult(policy string, ran []ranPhase, byPhase map[string][]record.Request) policyFigures {
	f := policyFigures{policy: policy, byClass: map[string]result.Metric{}}
	var rs, llm []record.Request
	var busy, depth, dur float64
	maxDepth := 0
	for _, p := range ran {
		if p.policy != policy {
			continue
		}
		prs := byPhase[p.Name]
		if rs == nil {
			rs = prs // one round: no copy
		} else {
			rs = append(slices.Clip(rs), prs...)
		}
		pl := reqset.Where(prs, reqset.IsType(protocol.TypeLLM))
		llm = append(llm, pl...)
		f.rounds = append(f.rounds, reqset.Measure(reqset.Where(pl, reqset.IsPriority(protocol.PriorityCritical))).TTFTP99)
		o := reqset.Busy(pl, p.Start, p.End)
		busy += o.Busy * p.Duration().Seconds()
		depth += o.MeanDepth * p.Duration().Seconds()
		maxDepth = max(maxDepth, o.MaxDepth)
		dur += p.Duration().Seconds()
	}
	all := reqset.Measure(rs)
	crit := reqset.Measure(reqset.Where(llm, reqset.IsPriority(protocol.PriorityCritical)))
	noCrit := "no critical LLM request succeeded with a first token"
	f.critTTFT = defCritTTFT.Measure(crit.TTFTP99, crit.TTFTN, noCrit)
	f.critSLO = defCritSLO.Measure(crit.SLOAttainment, crit.N, "no critical LLM request was sent")
	for _, k := range q.cfg.Classes {
		st := reqset.Measure(reqset.Where(llm, reqset.IsPriority(k.Priority)))
		f.byClass[k.Priority] = defCritTTFT.Measure(st.TTFTP99, st.TTFTN, "none succeeded")
	}
	f.goodput = defGoodput.Measure(all.Goodput(seconds(dur)), all.N, "no request was sent")
	f.slo = defSLO.Measure(all.SLOAttainment, all.N, "no request was sent")
	if noQueue := "the target reported no queue wait (X-Sagebench-Queue-Us)"; hasQueue(llm) && dur > 0 {
		f.busy, f.depthMean = defBusy.Measure(busy/dur, len(llm), noQueue), defDepthMean.Measure(depth/dur, len(llm), noQueue)
		f.depthMax = defDepthMax.Measure(float64(maxDepth), len(llm), noQueue)
	} else {
		f.busy, f.depthMean, f.depthMax = defBusy.NotMeasurable(noQueue), defDepthMean.NotMeasurable(noQueue), defDepthMax.NotMeasurable(noQueue)
	}
	f.critQueue = defCritQueue.Measure(crit.QueueP99, crit.QueueN, "the target reported no queue wait for critical requests")
	primary := f.named(f.critTTFT)
	f.row = workload.Row{Config: "policy=" + policy,
		Throughput: record.F(float64(all.OK) / max(dur, 1e-9)), LatencyP50: record.Sampled(all.E2EP50, all.OK),
		LatencyP95: record.Sampled(all.E2EP95, all.OK), LatencyP99: record.Sampled(all.E2EP99, all.OK),
		SuccessRate: record.Sampled(all.SuccessRate, all.N), DurationSeconds: record.F(dur), Primary: &primary,
		Metadata: map[string]any{"policy": policy}}
	return f
}

// result picks the policy with the lowest critical p99 TTFT and compares
// it with fifo (or the first policy run).
func (q *q2) result(pols []policyFigures) result.Result {
	if len(pols) == 0 {
		why := "no policy phase ran"
		return result.New("not answered: "+why, defBestCritTTFT.NotMeasurable(why))
	}
	best := -1
	for i, f := range pols {
		if f.critTTFT.Measured() && (best < 0 || f.critTTFT.Value < pols[best].critTTFT.Value) {
			best = i
		}
	}
	var metrics []result.Metric
	for _, f := range pols {
		metrics = append(metrics, f.metrics()...)
	}
	if best < 0 {
		why := "no policy had a successful critical LLM request"
		return result.New("not answered: "+why, defBestCritTTFT.NotMeasurable(why), metrics...)
	}
	b := pols[best]
	primary := defBestCritTTFT.Measure(b.critTTFT.Value, b.critTTFT.N, "").In("under " + b.policy)
	return result.New(answer(b, pols[baseline(pols)]), primary, metrics...)
}

// baseline is the index of fifo among pols, or 0.
func baseline(pols []policyFigures) int {
	for i, f := range pols {
		if f.policy == protocol.PolicyFIFO {
			return i
		}
	}
	return 0
}

// answer says which policy served the critical class fastest and by how
// much against the baseline, with a p-value over rounds when there are
// at least two.
func answer(b, base policyFigures) string {
	if b.policy == base.policy {
		return fmt.Sprintf("%s gave the critical class the lowest p99 TTFT, %s (SLO attainment %s); no other policy did better",
			b.policy, result.Short(b.critTTFT), result.Short(b.critSLO))
	}
	s := fmt.Sprintf("%s cut critical-class p99 TTFT from %s (%s) to %s", b.policy, result.Short(base.critTTFT), base.policy, result.Short(b.critTTFT))
	if base.critTTFT.Measured() && base.critTTFT.Value > 0 {
		s += fmt.Sprintf(" (%+.0f %%", 100*(b.critTTFT.Value-base.critTTFT.Value)/base.critTTFT.Value)
		if p, ok := aggregate.PValue(finiteOnly(b.rounds), finiteOnly(base.rounds)); ok {
			s += fmt.Sprintf(", p = %.3f, %d rounds each)", p, min(len(b.rounds), len(base.rounds)))
		} else {
			s += ", one round each: no p-value; raise q2.rounds)"
		}
	}
	return s + fmt.Sprintf("; critical SLO attainment %s vs %s", result.Short(b.critSLO), result.Short(base.critSLO))
}

// policyTable is the per-policy table.
func policyTable(pols []policyFigures) result.Table {
	t := result.Table{Title: "Policies", Note: "pooled over rounds; queue figures from X-Sagebench-Queue-Us",
		Columns: []string{"policy", "critical p99 TTFT", "critical SLO attainment", "normal p99 TTFT", "background p99 TTFT",
			"LLM queue busy", "mean queue depth", "max depth", "critical queue p99", "goodput", "SLO attainment"}}
	for _, f := range pols {
		t.AddRow(result.Text(f.policy), result.Of(f.critTTFT), result.Of(f.critSLO),
			cell(f.byClass[protocol.PriorityNormal]), cell(f.byClass[protocol.PriorityBackground]),
			result.Of(f.busy), result.Of(f.depthMean), result.Of(f.depthMax), result.Of(f.critQueue),
			result.Of(f.goodput), result.Of(f.slo))
	}
	return t
}

// cell is m's cell, or "–" for a class the configuration does not have.
func cell(m result.Metric) result.Cell {
	if m.Name == "" {
		return result.Text("–")
	}
	return result.Of(m)
}

func finiteOnly(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
