package q2

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	defTTFTDelta    = result.Def{Name: "critical_ttft_p99_vs_fifo", Unit: result.Percent, Direction: result.Lower}
	defTTFTP        = result.Def{Name: "critical_ttft_p99_p", Unit: result.Fraction, Direction: result.Lower}
	defSLODelta     = result.Def{Name: "critical_slo_attainment_vs_fifo", Unit: result.Percent, Direction: result.Higher}
	defSLOP         = result.Def{Name: "critical_slo_attainment_p", Unit: result.Fraction, Direction: result.Lower}
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
	critTTFT  result.Metric // p99 over every critical LLM request, a failed one +∞
	critSLO   result.Metric // with its Wilson interval
	byClass   map[string]result.Metric
	goodput   result.Metric
	slo       result.Metric
	busy      result.Metric
	depthMean result.Metric
	depthMax  result.Metric
	critQueue result.Metric
	// against the baseline (fifo): relative change of the p99, change of
	// the attainment in points, each with a Mann-Whitney p over rounds
	ttftDelta, ttftP, sloDelta, sloP result.Metric
	rounds                           []float64 // critical p99 TTFT of each round (+Inf: failures)
	roundsSLO                        []float64 // critical SLO attainment of each round
	row                              workload.Row
}

// named returns m renamed "<policy>.<name>".
func (f policyFigures) named(m result.Metric) result.Metric {
	m.Name = f.policy + "." + m.Name
	return m
}

// metrics are the policy's metrics, named after it.
func (f policyFigures) metrics() []result.Metric {
	var out []result.Metric
	for _, m := range []result.Metric{f.critTTFT, f.critSLO, f.ttftDelta, f.ttftP, f.sloDelta, f.sloP, f.goodput, f.slo, f.busy, f.depthMean, f.depthMax, f.critQueue} {
		if m.Name != "" {
			out = append(out, f.named(m))
		}
	}
	return out
}

// policyResult pools a policy's rounds into its figures and unified row.
func (q *q2) policyResult(policy string, ran []ranPhase, byPhase map[string][]record.Request, qs *queueSampler) policyFigures {
	f := policyFigures{policy: policy, byClass: map[string]result.Metric{}}
	var rs, llm []record.Request
	var mine []ranPhase
	var dur float64
	for _, p := range ran {
		if p.policy != policy {
			continue
		}
		mine = append(mine, p)
		prs := byPhase[p.Name]
		if rs == nil {
			rs = prs // one round: no copy
		} else {
			rs = append(slices.Clip(rs), prs...)
		}
		pl := reqset.Where(prs, reqset.IsType(protocol.TypeLLM))
		llm = append(llm, pl...)
		crit := reqset.Where(pl, reqset.IsPriority(protocol.PriorityCritical))
		f.rounds = append(f.rounds, reqset.TailOf(crit, 0.99, reqset.TTFT).Value)
		if len(crit) > 0 {
			f.roundsSLO = append(f.roundsSLO, reqset.Measure(crit).SLOAttainment)
		}
		dur += p.Duration().Seconds()
	}
	all := reqset.Measure(rs)
	critRS := reqset.Where(llm, reqset.IsPriority(protocol.PriorityCritical))
	crit := reqset.Measure(critRS)
	f.critTTFT = reqset.TailOf(critRS, 0.99, reqset.TTFT).Metric(defCritTTFT, "no critical LLM request was sent")
	f.critSLO = reqset.Attainment(defCritSLO, critRS, "no critical LLM request was sent")
	for _, k := range q.cfg.Classes {
		f.byClass[k.Priority] = reqset.TailOf(reqset.Where(llm, reqset.IsPriority(k.Priority)), 0.99, reqset.TTFT).Metric(defCritTTFT, "none sent")
	}
	f.goodput = defGoodput.Measure(all.Goodput(seconds(dur)), all.N, "no request was sent")
	f.slo = defSLO.Measure(all.SLOAttainment, all.N, "no request was sent")
	f.busy, f.depthMean, f.depthMax = occupancy(mine, byPhase, llm, qs)
	f.critQueue = defCritQueue.Measure(crit.QueueP99, crit.QueueN, "the target reported no queue wait for critical requests (X-Sagebench-Queue-Us)")
	f.row = workload.PolicyRow(policy, all, dur, f.critTTFT)
	return f
}

// occupancy is the LLM queue's busy share and mean and maximum depth
// over a policy's sub-runs: from the queue waits the target reports per
// request (X-Sagebench-Queue-Us), else from its /metrics queue gauge
// sampled during the sub-runs (to the sampling interval), else not
// measurable.
func occupancy(ps []ranPhase, byPhase map[string][]record.Request, llm []record.Request, qs *queueSampler) (busy, mean, most result.Metric) {
	var b, d, dur float64
	maxDepth := 0.0
	if hasQueue(llm) {
		for _, p := range ps {
			o := reqset.Busy(reqset.Where(byPhase[p.Name], reqset.IsType(protocol.TypeLLM)), p.Start, p.End)
			b, d = b+o.Busy*p.Duration().Seconds(), d+o.MeanDepth*p.Duration().Seconds()
			maxDepth, dur = max(maxDepth, float64(o.MaxDepth)), dur+p.Duration().Seconds()
		}
		if dur > 0 {
			return defBusy.Measure(b/dur, len(llm), ""), defDepthMean.Measure(d/dur, len(llm), ""), defDepthMax.Measure(maxDepth, len(llm), "")
		}
	}
	var xs []depthSample
	name := ""
	for _, p := range ps {
		got, n := qs.within(p.Start, p.End)
		xs, name = append(xs, got...), n
	}
	if len(xs) == 0 {
		why := qs.why()
		return defBusy.NotMeasurable(why), defDepthMean.NotMeasurable(why), defDepthMax.NotMeasurable(why)
	}
	gb, gm, gx := gaugeOccupancy(xs)
	why := fmt.Sprintf("from the target's %s, sampled every %v", name, qs.every)
	return defBusy.Measure(gb, len(xs), "").WithReason(why), defDepthMean.Measure(gm, len(xs), "").WithReason(why),
		defDepthMax.Measure(gx, len(xs), "").WithReason(why + ": the highest sample")
}

// compare sets f's changes against the baseline policy: the relative
// change of the critical p99 TTFT and the change of its SLO attainment
// in percentage points, each with the two-sided Mann-Whitney p over the
// rounds (one value per round and policy; not measurable with fewer
// than two rounds each).
func compare(f *policyFigures, base policyFigures) {
	where := "against " + base.policy
	switch {
	case f.critTTFT.Measured() && base.critTTFT.Measured() && base.critTTFT.Value > 0:
		f.ttftDelta = defTTFTDelta.Measure(100*(f.critTTFT.Value-base.critTTFT.Value)/base.critTTFT.Value, f.critTTFT.N, "").In(where)
	default:
		f.ttftDelta = defTTFTDelta.NotMeasurable(fmt.Sprintf("%s: the p99s are %s and %s", where, result.Short(f.critTTFT), result.Short(base.critTTFT)))
	}
	if f.critSLO.Measured() && base.critSLO.Measured() {
		f.sloDelta = defSLODelta.Measure(100*(f.critSLO.Value-base.critSLO.Value), f.critSLO.N, "").WithReason("percentage points").In(where)
	} else {
		f.sloDelta = defSLODelta.NotMeasurable(where + ": an attainment is missing")
	}
	f.ttftP = pValue(defTTFTP, f.rounds, base.rounds, where)
	f.sloP = pValue(defSLOP, f.roundsSLO, base.roundsSLO, where)
}

// pValue is the Mann-Whitney p of two policies' per-round values (a
// round whose quantile fell on failures ranks above every finite one).
func pValue(d result.Def, a, b []float64, where string) result.Metric {
	p, ok := aggregate.PValue(ranked(a), ranked(b))
	if !ok {
		return d.NotMeasurable(fmt.Sprintf("%s: %d and %d rounds; a p-value needs at least 2 each (raise q2.rounds, or compare repetitions with sagebench compare)", where, len(a), len(b)))
	}
	return d.Measure(p, min(len(a), len(b)), "").WithReason("Mann-Whitney U over rounds").In(where)
}

// ranked keeps a round's order for a rank test: +∞ (failures) becomes
// the largest finite value, NaN (no request) is dropped.
func ranked(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		switch {
		case math.IsNaN(x):
		case math.IsInf(x, 1):
			out = append(out, math.MaxFloat64/4)
		default:
			out = append(out, x)
		}
	}
	return out
}

// result names the policy with the lowest critical p99 TTFT (failures
// counting as +∞) and answers per policy against fifo (or the first
// policy run).
func (q *q2) result(pols []policyFigures) result.Result {
	if len(pols) == 0 {
		why := "no policy phase ran"
		return result.New("not answered: "+why, defBestCritTTFT.NotMeasurable(why))
	}
	bi := baseline(pols)
	for i := range pols {
		if i != bi {
			compare(&pols[i], pols[bi])
		}
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
		why := unmeasured(pols)
		return result.New("not answered: "+why, defBestCritTTFT.NotMeasurable(why), metrics...)
	}
	b := pols[best]
	primary := defBestCritTTFT.Measure(b.critTTFT.Value, b.critTTFT.N, "").In("under " + b.policy)
	return result.New(answer(best, bi, pols), primary, metrics...)
}

// unmeasured says why no policy has a critical p99 TTFT, with what each
// policy's sample does say (a bound, n) and its SLO attainment.
func unmeasured(pols []policyFigures) string {
	var s strings.Builder
	s.WriteString("no policy's critical p99 TTFT is measured (a p99 needs ≥ 100 critical requests a policy, and fewer than 1 % of them failed)")
	for i, f := range pols {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&s, "%s%s %s, SLO attainment %s", sep, f.policy, result.ShortN(f.critTTFT), result.ShortN(f.critSLO))
	}
	return s.String()
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

// answer names the best policy for the critical class and gives every
// policy's p99 TTFT and SLO attainment, with the change against the
// baseline and its p over rounds.
func answer(best, bi int, pols []policyFigures) string {
	b, base := pols[best], pols[bi]
	var s strings.Builder
	if best == bi {
		fmt.Fprintf(&s, "%s gave the critical class the lowest p99 TTFT, %s (SLO attainment %s); no other policy did better",
			b.policy, result.ShortN(b.critTTFT), result.Short(b.critSLO))
	} else {
		fmt.Fprintf(&s, "%s gave the critical class the lowest p99 TTFT: %s against %s under %s (%s), SLO attainment %s against %s (%s)",
			b.policy, result.ShortN(b.critTTFT), result.ShortN(base.critTTFT), base.policy, deltaText(b.ttftDelta, b.ttftP),
			result.Short(b.critSLO), result.Short(base.critSLO), deltaText(b.sloDelta, b.sloP))
	}
	noP := false
	for i, f := range pols {
		noP = noP || i != bi && !f.ttftP.Measured()
		if i == best || i == bi {
			continue
		}
		fmt.Fprintf(&s, "; %s %s (%s), %s", f.policy, result.ShortN(f.critTTFT), deltaText(f.ttftDelta, f.ttftP), result.Short(f.critSLO))
	}
	if noP && len(pols) > 1 {
		s.WriteString("; no p-values: fewer than 2 rounds a policy (raise q2.rounds, or compare repetitions)")
	}
	return s.String()
}

// deltaText is a change and its p for a sentence: "-95 %, p = 0.002 over
// 3 rounds", or the change alone when there is no p.
func deltaText(d, p result.Metric) string {
	if !d.Measured() {
		return "change not measurable"
	}
	v := result.FormatValue(d.Value, d.Unit)
	if strings.Contains(d.Reason, "percentage points") {
		v = strings.TrimSuffix(v, " %") + " points"
	}
	if !p.Measured() {
		return v
	}
	return fmt.Sprintf("%s, p = %.3f over %d rounds", v, p.Value, p.N)
}

// policyTable is the per-policy table.
func policyTable(pols []policyFigures) result.Table {
	t := result.Table{Key: TablePolicies, Title: "Policies", Note: "pooled over rounds; p99s count a failed request as +∞; changes against fifo with the Mann-Whitney p over rounds; queue figures from X-Sagebench-Queue-Us, else the target's /metrics queue gauge",
		Columns: []string{"policy", "critical p99 TTFT", "vs fifo", "p", "critical SLO attainment", "vs fifo (points)", "p", "normal p99 TTFT", "background p99 TTFT",
			"LLM queue busy", "mean queue depth", "max depth", "critical queue p99", "goodput", "SLO attainment"}}
	for _, f := range pols {
		t.AddRow(result.Text(f.policy), result.Of(f.critTTFT), cell(f.ttftDelta), cell(f.ttftP), result.Of(f.critSLO), cell(f.sloDelta), cell(f.sloP),
			cell(f.byClass[protocol.PriorityNormal]), cell(f.byClass[protocol.PriorityBackground]),
			result.Of(f.busy), result.Of(f.depthMean), result.Of(f.depthMax), result.Of(f.critQueue),
			result.Of(f.goodput), result.Of(f.slo))
	}
	return t
}

// cell is m's cell, or "–" for a metric the policy does not have (the
// baseline's change against itself, a class not configured).
func cell(m result.Metric) result.Cell {
	if m.Name == "" {
		return result.Text("–")
	}
	return result.Of(m)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
