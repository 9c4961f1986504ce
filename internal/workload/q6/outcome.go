package q6

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
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

// policyMetrics are one policy's Q6 figures.
type policyMetrics struct {
	HighBurst, HighBase, LowDegradation float64
	Inversions                          int
	InvertedHigh                        float64
	RecoveryMeanMs, RecoveryMaxMs       float64
	Unrecovered                         int
}

func (q *q6) outcome(out workload.Outcome, rs []record.Request) workload.Outcome {
	out.Extra, out.Bench = map[string]float64{}, []record.BenchLine{}
	var tbl strings.Builder
	tbl.WriteString("| policy | window | priority | count | p99 TTFT ms | p99 E2E ms | SLO attainment |\n|---|---|---|---|---|---|---|\n")
	var sum strings.Builder
	sum.WriteString("| policy | high SLO in bursts | high SLO in base | low degradation (burst ÷ base p99 TTFT) | priority inversions | inverted high | recovery mean ms | recovery max ms | not recovered |\n|---|---|---|---|---|---|---|---|---|\n")
	primarySet := false
	for _, p := range out.Phases {
		prs := reqset.Where(rs, func(r *record.Request) bool { return r.Phase == p.Name })
		m := q.measure(p, prs, &out, &tbl)
		x := out.Extra
		x[p.Name+".high_burst_slo_attainment"], x[p.Name+".high_base_slo_attainment"] = m.HighBurst, m.HighBase
		x[p.Name+".low_degradation"], x[p.Name+".priority_inversions"] = m.LowDegradation, float64(m.Inversions)
		x[p.Name+".inverted_high_fraction"], x[p.Name+".recovery_mean_ms"] = m.InvertedHigh, m.RecoveryMeanMs
		x[p.Name+".recovery_max_ms"], x[p.Name+".unrecovered_bursts"] = m.RecoveryMaxMs, float64(m.Unrecovered)
		if !primarySet && (p.Name != protocol.PolicyFIFO || p.Name == out.Phases[len(out.Phases)-1].Name) {
			x["primary"], primarySet = m.HighBurst, true
			out.Notes = append(out.Notes, "primary metric: high-priority SLO attainment inside bursts under "+p.Name)
		}
		fmt.Fprintf(&sum, "| %s | %.1f%% | %.1f%% | %s | %d | %.1f%% | %s | %s | %d |\n", p.Name, 100*m.HighBurst, 100*m.HighBase,
			num(m.LowDegradation, "%.2f"), m.Inversions, 100*m.InvertedHigh, num(m.RecoveryMeanMs, "%.0f"), num(m.RecoveryMaxMs, "%.0f"), m.Unrecovered)
		all := reqset.Measure(prs)
		out.Rows = append(out.Rows, workload.Row{Config: "policy=" + p.Name, Throughput: float64(all.OK) / max(p.Duration().Seconds(), 1e-9),
			LatencyP50: all.E2EP50, LatencyP95: all.E2EP95, LatencyP99: all.E2EP99, SuccessRate: all.SuccessRate,
			DurationSeconds: p.Duration().Seconds(), Metadata: map[string]any{"policy": p.Name,
				"high_burst_slo_attainment": finite(m.HighBurst), "low_degradation": finite(m.LowDegradation),
				"priority_inversions": m.Inversions, "recovery_mean_ms": finite(m.RecoveryMeanMs)}})
	}
	for k, v := range out.Extra {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(out.Extra, k)
		}
	}
	out.Sections = append(out.Sections,
		workload.Section{Title: "Bursts per policy", Body: sum.String()},
		workload.Section{Title: "Burst and base windows", Body: tbl.String()})
	return out
}

// measure computes a policy's figures and adds its bench lines and table
// rows.
func (q *q6) measure(p summary.Phase, prs []record.Request, out *workload.Outcome, tbl *strings.Builder) policyMetrics {
	var m policyMetrics
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
			fmt.Fprintf(tbl, "| %s | %s | %s | %d | %s | %s | %.1f%% |\n", p.Name, w.name, pr, s.N,
				num(s.TTFTP99, "%.0f"), num(s.E2EP99, "%.0f"), 100*s.SLOAttainment)
		}
	}
	m.HighBurst, m.HighBase = stats["burst/high"].SLOAttainment, stats["base/high"].SLOAttainment
	m.LowDegradation = stats["burst/low"].TTFTP99 / stats["base/low"].TTFTP99
	m.Inversions, m.InvertedHigh = Inversions(prs)
	m.RecoveryMeanMs, m.RecoveryMaxMs, m.Unrecovered = q.recovery(p, prs)
	return m
}

// recovery reads, after the end of each burst, how long the TTFT p99 of
// all requests took to stay within low_slo.ttft for hold.
func (q *q6) recovery(p summary.Phase, prs []record.Request) (meanMs, maxMs float64, unrecovered int) {
	ws, err := series.Compute(prs, q.cfg.Series)
	bound := float64(q.cfg.Low.TTFT) / float64(time.Millisecond)
	if err != nil || bound <= 0 {
		return math.NaN(), math.NaN(), 0
	}
	n := 0
	for _, b := range bursts(q.cfg.Schedule, p.Start) {
		r := series.RecoveryAfter(ws, int64(b.End), "ttft_p99", bound, q.cfg.Hold)
		if !r.Recovered {
			unrecovered++
			continue
		}
		meanMs += r.AfterMs
		maxMs = max(maxMs, r.AfterMs)
		n++
	}
	if n == 0 {
		return math.NaN(), math.NaN(), unrecovered
	}
	return meanMs / float64(n), maxMs, unrecovered
}

// Inversions counts priority inversions in rs: pairs of requests on the
// same model where the lower-priority one was sent later than the
// higher-priority one yet got its first token earlier, while the higher
// one was still waiting for its own (a higher-priority request that got
// no first token waits for ever). inverted is the fraction of the
// higher-priority requests (all but the lowest class) overtaken at
// least once.
func Inversions(rs []record.Request) (pairs int, inverted float64) {
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
	overtaken, candidates := 0, 0
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
	return pairs, inverted
}

func num(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
