package q6

import (
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
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
	defViolated    = result.Def{Name: "bursts_violated", Unit: result.Count, Direction: result.Lower}
	defUnrecovered = result.Def{Name: "bursts_unrecovered", Unit: result.Count, Direction: result.Lower}
)

// defs are the metrics a q6.target may name.
var defs = []result.Def{defHighBurst}

// policyMetrics are one policy's Q6 figures.
type policyMetrics struct {
	policy                                    string
	highBurst, highBase, lowDegradation       result.Metric
	inversions, inverted, recoverMean, recMax result.Metric
	violated, unrecovered                     result.Metric
	bursts                                    []burstRecovery
}

func (m policyMetrics) metrics() []result.Metric {
	var out []result.Metric
	for _, x := range []result.Metric{m.highBurst, m.highBase, m.lowDegradation, m.inversions, m.inverted, m.recoverMean, m.recMax, m.violated, m.unrecovered} {
		x.Name = m.policy + "." + x.Name
		out = append(out, x)
	}
	return out
}

func (q *q6) outcome(out workload.Outcome, rs []record.Request) workload.Outcome {
	out.Bench = []record.BenchLine{}
	win := result.Table{Key: TableWindows, Title: "Burst and base windows", Columns: []string{"policy", "window", "priority", "count", "p99 TTFT", "p99 E2E", "SLO attainment"}}
	var pms []policyMetrics
	for _, p := range out.Phases {
		prs := reqset.Where(rs, func(r *record.Request) bool { return r.Phase == p.Name })
		m := q.measure(p, prs, &out, &win)
		pms = append(pms, m)
		out.Rows = append(out.Rows, workload.PolicyRow(p.Name, reqset.Measure(prs), p.Duration().Seconds(), m.highBurst))
	}
	out.Result = primaryResult(pms)
	out.Result.Tables = append(out.Result.Tables, burstTable(pms), q.recoveryTable(pms), win)
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
		p.policy, result.Format(p.highBurst), result.Short(p.highBase), result.Short(p.lowDegradation), result.Short(p.inversions))
	if fifo >= 0 && fifo != pick {
		ans += fmt.Sprintf("; under fifo %s inside bursts", result.Short(pms[fifo].highBurst))
	}
	return result.New(ans, primary, metrics...)
}

func burstTable(pms []policyMetrics) result.Table {
	t := result.Table{Key: TableBursts, Title: "Bursts per policy", Note: "low degradation: low-priority p99 TTFT in bursts ÷ in the base load (the base without each burst's drain; failed requests as +∞); an inversion: a lower-priority request sent more than q6.inversion_tau after a higher one got its first token more than q6.inversion_tau before it; recovery over the bursts that broke the bound",
		Columns: []string{"policy", "high SLO in bursts", "high SLO in base", "low degradation", "priority inversions", "inverted high", "bursts over bound", "never recovered", "recovery mean", "recovery max"}}
	for _, m := range pms {
		t.AddRow(result.Text(m.policy), result.Of(m.highBurst), result.Of(m.highBase), result.Of(m.lowDegradation),
			result.Of(m.inversions), result.Of(m.inverted), result.Of(m.violated), result.Of(m.unrecovered), result.Of(m.recoverMean), result.Of(m.recMax))
	}
	return t
}

// recoveryTable lists each burst's recovery.
func (q *q6) recoveryTable(pms []policyMetrics) result.Table {
	t := result.Table{Key: TableRecovery, Title: "Recovery after each burst", Note: fmt.Sprintf("TTFT p99 of the high-priority requests in windows of %v every %v (a window with a failure breaks the bound), against high_slo.ttft %v held for %v; drain: from the burst's end until as few high-priority requests waited for a first token as in the second before it",
		q.cfg.Series.WithDefaults().Width, q.cfg.Series.WithDefaults().Step, q.cfg.High.TTFT, q.cfg.Hold),
		Columns: []string{"policy", "burst", "from s", "state", "recovery", "worst window p99", "drain"}}
	step := record.Millis(q.cfg.Series.WithDefaults().Step)
	for _, m := range pms {
		for i, b := range m.bursts {
			rec := result.Text("–")
			if b.State == recovered {
				rec = result.Of(defRecoverMax.Measure(b.AfterMs, 1, "").WithResolution(step))
			}
			worst := result.Text("–")
			switch {
			case math.IsInf(b.WorstMs, 1):
				worst = result.Of(ttftDef.Never("a window's failed requests put its p99 at +∞"))
			case !math.IsNaN(b.WorstMs):
				worst = result.Of(ttftDef.Measure(b.WorstMs, 1, ""))
			}
			t.AddRow(result.Text(m.policy), result.Textf("%d", i+1), result.Textf("%.1f", b.Start.Seconds()), result.Text(b.State), rec, worst,
				result.Of(defRecoverMax.Measure(b.DrainMs, 1, "")))
		}
	}
	return t
}

// measure computes a policy's figures and adds its bench lines and table
// rows. Requests due during a burst's drain (from its end until the
// queue is back to its pre-burst depth) belong to neither window: the
// base load's figures are those of a pool not still clearing a burst.
func (q *q6) measure(p summary.Phase, prs []record.Request, out *workload.Outcome, tbl *result.Table) policyMetrics {
	m := policyMetrics{policy: p.Name}
	bs := bursts(q.cfg.Schedule, p.Start)
	drains := drainEnds(prs, bs)
	inDrain := func(r *record.Request) bool {
		t := time.Duration(r.IntendedNS)
		for i, b := range bs {
			if t >= b.End && t < drains[i] {
				return true
			}
		}
		return false
	}
	windows := map[string][]record.Request{
		"burst": reqset.Where(prs, func(r *record.Request) bool { return q.inBurst(p, r) }),
		"drain": reqset.Where(prs, func(r *record.Request) bool { return !q.inBurst(p, r) && inDrain(r) }),
		"base":  reqset.Where(prs, func(r *record.Request) bool { return !q.inBurst(p, r) && !inDrain(r) }),
	}
	tails := map[string]reqset.Tail{}
	for _, w := range []string{"burst", "drain", "base"} {
		for _, pr := range []string{protocol.PriorityHigh, protocol.PriorityLow} {
			sel := reqset.Where(windows[w], reqset.IsPriority(pr))
			tails[w+"/"+pr] = reqset.TailOf(sel, 0.99, reqset.TTFT)
			if l, ok := reqset.BenchLine("policy="+p.Name+"/window="+w+"/priority="+pr, sel, p.Duration().Seconds()); ok && w != "drain" {
				out.Bench = append(out.Bench, l)
			}
			tbl.AddRow(result.Text(p.Name), result.Text(w), result.Text(pr), result.Textf("%d", len(sel)),
				result.Of(tails[w+"/"+pr].Metric(ttftDef, "none sent")), result.Of(reqset.TailOf(sel, 0.99, reqset.E2E).Metric(e2eDef, "none sent")),
				result.Of(reqset.Attainment(defHighBurst, sel, "none sent")))
			if pr == protocol.PriorityHigh && w != "drain" {
				d := map[string]result.Def{"burst": defHighBurst, "base": defHighBase}[w]
				v := reqset.Attainment(d, sel, fmt.Sprintf("no high-priority request was due in the %s load", w))
				if w == "burst" {
					m.highBurst = v
				} else {
					m.highBase = v
				}
			}
		}
	}
	m.lowDegradation = degradation(tails["burst/low"].Metric(ttftDef, "none sent"), tails["base/low"].Metric(ttftDef, "none sent"))
	pairs, inverted, candidates := Inversions(prs, q.cfg.InversionTau)
	m.inversions = defInversions.Measure(float64(pairs), max(candidates, 1), "")
	m.inverted = defInverted.Measure(inverted, candidates, "no higher-priority request was sent")
	m.recoverMean, m.recMax, m.violated, m.unrecovered = q.recovery(p, prs, &m)
	return m
}

// degradation is the low-priority p99 TTFT in bursts ÷ in the base load:
// a bound when the burst's p99 falls on failures, not measurable when
// either is missing.
func degradation(burst, base result.Metric) result.Metric {
	switch {
	case !base.Measured() || base.Value <= 0:
		return defLowDegrade.NotMeasurable("the base load's low-priority p99 TTFT is " + result.Format(base))
	case burst.State == result.Bound:
		return defLowDegrade.Within(burst.Interval[0]/base.Value, math.Inf(1), burst.N, burst.Reason)
	case !burst.Measured():
		return defLowDegrade.NotMeasurable("the bursts' low-priority p99 TTFT is " + result.Format(burst))
	}
	return defLowDegrade.Measure(burst.Value/base.Value, min(burst.N, base.N), "")
}

var (
	ttftDef = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	e2eDef  = result.Def{Name: "e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// recovery reads each burst's recovery (recoveries) of the class whose
// SLO the bursts are about — the high-priority requests against
// high_slo.ttft — and folds it. (Judged on every request against the
// low class's looser bound, a policy that let half the high-priority
// burst requests miss their bound had "nothing to recover from".)
func (q *q6) recovery(p summary.Phase, prs []record.Request, m *policyMetrics) (mean, worst, violated, never result.Metric) {
	bound := record.Millis(q.cfg.High.TTFT)
	why := ""
	if bound <= 0 {
		why = "q6.high_slo.ttft sets no bound to recover to"
	}
	rs, err := q.recoveries(p, reqset.Where(prs, reqset.IsPriority(protocol.PriorityHigh)), bound)
	if err != nil {
		why = err.Error()
	}
	if why != "" {
		return defRecoverMean.NotMeasurable(why), defRecoverMax.NotMeasurable(why), defViolated.NotMeasurable(why), defUnrecovered.NotMeasurable(why)
	}
	m.bursts = rs
	return recoveryMetrics(rs, q.cfg.Series.WithDefaults().Step)
}

// Inversions counts priority inversions in rs: pairs of requests on the
// same model where the lower-priority one was sent more than tau after
// the higher-priority one yet got its first token more than tau before
// it, while the higher one was still waiting for its own (one that got
// no first token waits for ever). Within tau either end is a tie, not an
// order: first tokens within tau are two slots freed at once, and sends
// within tau may reach the target in either order. inverted is the
// fraction of the higher-priority requests (all but the lowest class)
// overtaken at least once.
func Inversions(rs []record.Request, tau time.Duration) (pairs int, inverted float64, candidates int) {
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
			if !ok || lr <= hr || l.Model != h.Model || l.SentNS-h.SentNS <= int64(tau) || l.FirstToken == 0 {
				continue
			}
			if h.FirstToken == 0 || h.FirstToken-l.FirstToken > int64(tau) {
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

// Recompute computes the result from the run's records alone: each
// phase of run.json is a policy's replay; the bursts are those of the
// configured schedule from the phase's recorded start.
func (q *q6) Recompute(rec workload.Records) (result.Result, error) {
	return q.outcome(workload.Outcome{Phases: rec.Phases}, rec.Requests).Result, nil
}
