package q6

import (
	"fmt"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// window is a burst, [Start, End) from the schedule's zero.
type window struct{ Start, End time.Duration }

// bursts lists the burst windows of an onoff schedule, shifted by at.
func bursts(sc load.ScheduleConfig, at time.Duration) []window {
	var ws []window
	for k := time.Duration(0); sc.BurstPeriod > 0 && k*sc.BurstPeriod < sc.Duration; k++ {
		s := k * sc.BurstPeriod
		ws = append(ws, window{at + s, at + min(s+sc.BurstLength, sc.Duration)})
	}
	return ws
}

// inBurst says whether r was due inside a burst of phase p.
func (q *q6) inBurst(p summary.Phase, r *record.Request) bool {
	rel := time.Duration(r.IntendedNS) - p.Start
	sc := q.cfg.Schedule
	return rel >= 0 && sc.BurstPeriod > 0 && rel%sc.BurstPeriod < sc.BurstLength
}

// Q6's metrics; the per-policy ones are named "<policy>.<name>".
var (
	defHighBurst   = result.Def{Name: "high_burst_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defHighBase    = result.Def{Name: "high_base_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defLowDegrade  = result.Def{Name: "low_degradation", Unit: result.Ratio, Direction: result.Lower}
	defInversions  = result.Def{Name: "priority_inversions", Unit: result.Count, Direction: result.Lower}
	defInverted    = result.Def{Name: "inverted_high_fraction", Unit: result.Fraction, Direction: result.Lower}
	defRecoverMean = result.Def{Name: "recovery_mean_ms", Unit: result.Ms, Direction: result.Lower}
	defRecoverMax  = result.Def{Name: "recovery_max_ms", Unit: result.Ms, Direction: result.Lower}
)

// defs are the metrics a q6.target may name.
var defs = []result.Def{defHighBurst}

// policyMetrics are one policy's Q6 figures.
type policyMetrics struct {
	policy                                    string
	highBurst, highBase, lowDegradation       result.Metric
	inversions, inverted, recoverMean, recMax result.Metric
}

func (m policyMetrics) metrics() []result.Metric {
	var out []result.Metric
	for _, x := range []result.Metric{m.highBurst, m.highBase, m.lowDegradation, m.inversions, m.inverted, m.recoverMean, m.recMax} {
		x.Name = m.policy + "." + x.Name
		out = append(out, x)
	}
	return out
}

func (q *q6) outcome(out workload.Outcome, rs []record.Request) workload.Outcome {
	out.Bench = []record.BenchLine{}
	win := result.Table{Title: "Burst and base windows", Columns: []string{"policy", "window", "priority", "count", "p99 TTFT", "p99 E2E", "SLO attainment"}}
	var pms []policyMetrics
	for _, p := range out.Phases {
		prs := reqset.Where(rs, func(r *record.Request) bool { return r.Phase == p.Name })
		m := q.measure(p, prs, &out, &win)
		pms = append(pms, m)
		all := reqset.Measure(prs)
		primary := m.highBurst
		primary.Name = p.Name + "." + primary.Name
		out.Rows = append(out.Rows, workload.Row{Config: "policy=" + p.Name, Throughput: record.F(float64(all.OK) / max(p.Duration().Seconds(), 1e-9)),
			LatencyP50: record.Sampled(all.E2EP50, all.OK), LatencyP95: record.Sampled(all.E2EP95, all.OK), LatencyP99: record.Sampled(all.E2EP99, all.OK),
			SuccessRate: record.Sampled(all.SuccessRate, all.N), DurationSeconds: record.F(p.Duration().Seconds()), Primary: &primary,
			Metadata: map[string]any{"policy": p.Name}})
	}
	out.Result = primaryResult(pms)
	out.Result.Tables = append(out.Result.Tables, burstTable(pms), win)
	return out
}

// primaryResult answers with the high-priority SLO attainment inside
// bursts under the first policy that is not fifo (fifo when it is the
// only one), against fifo.
func primaryResult(pms []policyMetrics) result.Result {
	if len(pms) == 0 {
		return result.New("not answered: no policy ran", defHighBurst.NotMeasurable("no policy ran"))
	}
	pick, fifo := len(pms)-1, -1
	for i := len(pms) - 1; i >= 0; i-- {
		if pms[i].policy != protocol.PolicyFIFO {
			pick = i
		} else {
			fifo = i
		}
	}
	var metrics []result.Metric
	for _, m := range pms {
		metrics = append(metrics, m.metrics()...)
	}
	p := pms[pick]
	primary := p.highBurst.In("under " + p.policy)
	ans := fmt.Sprintf("under %s, %s of high-priority requests met their SLO inside bursts (%s in the base load), low-priority p99 TTFT %s in bursts, %s priority inversions",
		p.policy, result.Short(p.highBurst), result.Short(p.highBase), result.Short(p.lowDegradation), result.Short(p.inversions))
	if fifo >= 0 && fifo != pick {
		ans += fmt.Sprintf("; under fifo %s inside bursts", result.Short(pms[fifo].highBurst))
	}
	return result.New(ans, primary, metrics...)
}

func burstTable(pms []policyMetrics) result.Table {
	t := result.Table{Title: "Bursts per policy", Note: "low degradation: low-priority p99 TTFT in bursts ÷ in the base load",
		Columns: []string{"policy", "high SLO in bursts", "high SLO in base", "low degradation", "priority inversions", "inverted high", "recovery mean", "recovery max"}}
	for _, m := range pms {
		t.AddRow(result.Text(m.policy), result.Of(m.highBurst), result.Of(m.highBase), result.Of(m.lowDegradation),
			result.Of(m.inversions), result.Of(m.inverted), result.Of(m.recoverMean), result.Of(m.recMax))
	}
	return t
}

// measure computes a policy's figures and adds its bench lines and table
// rows.
func (q *q6) measure(p summary.Phase, prs []record.Request, out *workload.Outcome, tbl *result.Table) policyMetrics {
	m := policyMetrics{policy: p.Name}
	burst := reqset.Where(prs, func(r *record.Request) bool { return q.inBurst(p, r) })
	base := reqset.Where(prs, func(r *record.Request) bool { return !q.inBurst(p, r) })
	stats := map[string]reqset.Stats{}
	for _, w := range []struct {
		name string
		rs   []record.Request
	}{{"burst", burst}, {"base", base}} {
		for _, pr := range []string{protocol.PriorityHigh, protocol.PriorityLow} {
			sel := reqset.Where(w.rs, reqset.IsPriority(pr))
			s := reqset.Measure(sel)
			stats[w.name+"/"+pr] = s
			if l, ok := reqset.BenchLine("policy="+p.Name+"/window="+w.name+"/priority="+pr, sel, p.Duration().Seconds()); ok {
				out.Bench = append(out.Bench, l)
			}
			tbl.AddRow(result.Text(p.Name), result.Text(w.name), result.Text(pr), result.Textf("%d", s.N),
				result.Of(ttftDef.Measure(s.TTFTP99, s.TTFTN, "none succeeded")), result.Of(e2eDef.Measure(s.E2EP99, s.OK, "none succeeded")),
				result.Of(defHighBurst.Measure(s.SLOAttainment, s.N, "none sent")))
		}
	}
	hb, hs := stats["burst/high"], stats["base/high"]
	m.highBurst = defHighBurst.Measure(hb.SLOAttainment, hb.N, "no high-priority request was due inside a burst")
	m.highBase = defHighBase.Measure(hs.SLOAttainment, hs.N, "no high-priority request was due in the base load")
	lb, ls := stats["burst/low"], stats["base/low"]
	m.lowDegradation = defLowDegrade.Measure(lb.TTFTP99/ls.TTFTP99, min(lb.TTFTN, ls.TTFTN), "a low-priority p99 TTFT is missing (none succeeded in bursts or in the base load)")
	pairs, inverted, candidates := Inversions(prs)
	m.inversions = defInversions.Measure(float64(pairs), max(candidates, 1), "")
	m.inverted = defInverted.Measure(inverted, candidates, "no higher-priority request was sent")
	m.recoverMean, m.recMax = q.recovery(p, prs)
	return m
}

var (
	ttftDef = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	e2eDef  = result.Def{Name: "e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// recovery reads, after the end of each burst, how long the TTFT p99 of
// all requests took to stay within low_slo.ttft for hold: the mean and
// the worst over the bursts, never when a burst never recovered.
func (q *q6) recovery(p summary.Phase, prs []record.Request) (mean, worst result.Metric) {
	ws, err := series.Compute(prs, q.cfg.Series)
	bound := float64(q.cfg.Low.TTFT) / float64(time.Millisecond)
	switch {
	case err != nil:
		return defRecoverMean.NotMeasurable(err.Error()), defRecoverMax.NotMeasurable(err.Error())
	case bound <= 0:
		why := "q6.low_slo.ttft sets no bound to recover to"
		return defRecoverMean.NotMeasurable(why), defRecoverMax.NotMeasurable(why)
	}
	var after []float64
	unrecovered := 0
	bs := bursts(q.cfg.Schedule, p.Start)
	for _, b := range bs {
		r := series.RecoveryAfter(ws, int64(b.End), "ttft_p99", bound, q.cfg.Hold)
		if !r.Recovered {
			unrecovered++
			continue
		}
		after = append(after, r.AfterMs)
	}
	if unrecovered > 0 {
		why := fmt.Sprintf("%d of %d bursts never recovered by the end of the phase", unrecovered, len(bs))
		return defRecoverMean.Never(why), defRecoverMax.Never(why)
	}
	if len(after) == 0 {
		return defRecoverMean.NotMeasurable("no burst"), defRecoverMax.NotMeasurable("no burst")
	}
	sum := 0.0
	for _, a := range after {
		sum += a
	}
	return defRecoverMean.Measure(sum/float64(len(after)), len(after), ""), defRecoverMax.Measure(slices.Max(after), len(after), "")
}

// Inversions counts priority inversions in rs: pairs of requests on the
// same model where the lower-priority one was sent later than the
// higher-priority one yet got its first token earlier, while the higher
// one was still waiting for its own (a higher-priority request that got
// no first token waits for ever). inverted is the fraction of the
// higher-priority requests (all but the lowest class) overtaken at
// least once.
func Inversions(rs []record.Request) (pairs int, inverted float64, candidates int) {
	rank := map[string]int{}
	for i, p := range protocol.Priorities() {
		rank[p] = i // 0 = most urgent
	}
	lowest := -1
	for i := range rs {
		if r, ok := rank[rs[i].Priority]; ok {
			lowest = max(lowest, r)
		}
	}
	overtaken := 0
	for i := range rs {
		h := &rs[i]
		hr, ok := rank[h.Priority]
		if !ok || hr == lowest || h.SentNS == 0 {
			continue
		}
		candidates++
		hit := false
		for j := range rs {
			l := &rs[j]
			lr, ok := rank[l.Priority]
			if !ok || lr <= hr || l.Model != h.Model || l.SentNS <= h.SentNS || l.FirstToken == 0 {
				continue
			}
			if h.FirstToken == 0 || l.FirstToken < h.FirstToken {
				pairs++
				hit = true
			}
		}
		if hit {
			overtaken++
		}
	}
	if candidates > 0 {
		inverted = float64(overtaken) / float64(candidates)
	}
	return pairs, inverted, candidates
}
