package q3

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// tailQ is the quantile of the victim's TTFT Q3 compares.
const tailQ = 0.99

// Q3's metrics; the per-policy ones are named "<policy>.<name>".
var (
	defVictimSLO   = result.Def{Name: "victim_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defVictimAlone = result.Def{Name: "victim_slo_attainment_alone", Unit: result.Fraction, Direction: result.Higher}
	defRatio       = result.Def{Name: "interference_ratio", Unit: result.Ratio, Direction: result.Lower}
	defAlone       = result.Def{Name: "victim_ttft_p99_alone_ms", Unit: result.Ms, Direction: result.Lower}
	defContended   = result.Def{Name: "victim_ttft_p99_contended_ms", Unit: result.Ms, Direction: result.Lower}
	defJain        = result.Def{Name: "jain_fairness", Unit: result.Index, Direction: result.Higher}
	def429         = result.Def{Name: "aggressor_429", Unit: result.Count, Direction: result.Lower}
	defTTFT        = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defE2E         = result.Def{Name: "e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defAttain      = result.Def{Name: "slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defGoodput     = result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}
	defShare       = result.Def{Name: "goodput_per_fair_share", Unit: result.Ratio, Direction: result.Higher}
)

// defs are the metrics a q3.target may name.
var defs = []result.Def{defVictimSLO, defRatio}

// isolation are one policy's Q3 figures.
type isolation struct {
	policy                  string
	victimSLO, victimAlone  result.Metric // SLO attainment beside the aggressor and alone (this policy)
	alone, contended, ratio result.Metric // p99 TTFT, failures as +∞
	jain, n429              result.Metric
}

func (m isolation) metrics() []result.Metric {
	var out []result.Metric
	for _, x := range []result.Metric{m.victimSLO, m.victimAlone, m.ratio, m.alone, m.contended, m.jain, m.n429} {
		x.Name = m.policy + "." + x.Name
		out = append(out, x)
	}
	return out
}

func (q *q3) outcome(out workload.Outcome, policies []string, rs []record.Request) workload.Outcome {
	out.Bench = []record.BenchLine{}
	byPhase := map[string][]record.Request{}
	for _, r := range rs {
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	dur := map[string]float64{}
	for _, p := range out.Phases {
		dur[p.Name] = p.Duration().Seconds()
	}
	ten := result.Table{Key: TableTenants, Title: "Tenants", Note: "p99 TTFT and E2E count a failed request as +∞; fair share: the contended phase's goodput shared max-min fairly over the tenants' offered rates",
		Columns: []string{"policy", "phase", "tenant", "count", "ok", "429", "p99 TTFT", "p99 E2E", "SLO attainment", "goodput", "fair share", "goodput ÷ fair share"}}
	// Each policy's ratio is against its own alone phase: a policy may
	// change how the victim fares even alone (fair_share's quotas), so a
	// baseline pooled over policies would move its ratio. The pooled alone
	// p99 stays as a reference figure.
	var alone []record.Request
	for _, pol := range policies {
		alone = append(alone, reqset.Where(byPhase[pol+"."+phaseAlone], reqset.IsTenant(q.cfg.Victim.Tenant))...)
	}
	base := reqset.TailOf(alone, tailQ, reqset.TTFT).Metric(defAlone, "no victim request was sent alone").WithReason("pooled over every policy's alone phase, for reference; each ratio is against its policy's own")
	var isos []isolation
	for _, pol := range policies {
		m := q.measure(pol, byPhase, dur, &out, &ten)
		m.ratio = ratio(m.contended, m.alone)
		isos = append(isos, m)
		out.Rows = append(out.Rows, q.row(pol, m, byPhase[pol+"."+phaseContended], dur[pol+"."+phaseContended]))
	}
	out.Result = q.result(isos, base)
	out.Result.Metrics = append(out.Result.Metrics, q.boundMetrics()...)
	out.Result.Tables = append(out.Result.Tables, isolationTable(isos), ten)
	return out
}

func (q *q3) row(pol string, m isolation, cont []record.Request, d float64) workload.Row {
	return workload.PolicyRow(pol, reqset.Measure(cont), d, m.victimSLO)
}

// ratio is the victim's contended p99 over its alone p99 (the same
// policy's): measured when both are; a bound [contended low end ÷
// alone, ∞) when the contended p99 falls on failures; a bound [0,
// contended ÷ alone's lower bound] when the alone p99 is only bounded
// below (too few requests alone for a p99); not measurable otherwise —
// never a number that reads as isolation when it cannot be one.
func ratio(contended, alone result.Metric) result.Metric {
	switch {
	case contended.State == result.Never || contended.State == result.NotMeasurable:
		return defRatio.NotMeasurable("the contended p99 is " + result.Format(contended))
	case alone.State == result.Bound && contended.Measured() && alone.Interval[0] > 0:
		return defRatio.Within(0, contended.Value/alone.Interval[0], contended.N,
			"at most: the alone p99 is only bounded below, "+result.Format(alone))
	case !alone.Measured():
		return defRatio.NotMeasurable("the alone p99 is " + result.Format(alone))
	case alone.Value <= 0:
		return defRatio.NotMeasurable("the alone p99 is 0 ms")
	case contended.State == result.Bound:
		return defRatio.Within(contended.Interval[0]/alone.Value, math.Inf(1), contended.N, contended.Reason)
	}
	return defRatio.Measure(contended.Value/alone.Value, contended.N, "")
}

// result names the policy whose isolation is the headline (fair_share
// when it ran, else the first): the victim's SLO attainment beside the
// aggressor against alone, the ratio of p99s beside it.
func (q *q3) result(isos []isolation, base result.Metric) result.Result {
	if len(isos) == 0 {
		return result.New("not answered: no policy ran", defVictimSLO.NotMeasurable("no policy ran"))
	}
	pick := 0
	for i, m := range isos {
		if m.policy == protocol.PolicyFairShare {
			pick = i
		}
	}
	p := isos[pick]
	primary := p.victimSLO.In("under " + p.policy)
	metrics := []result.Metric{p.ratio.In("under " + p.policy)}
	for _, m := range isos {
		metrics = append(metrics, m.metrics()...)
	}
	metrics = append(metrics, base)
	return result.New(answer(p, isos, base), primary, metrics...)
}

// answer says how the victim fared beside the aggressor under the
// headline policy, and under the others.
func answer(p isolation, isos []isolation, base result.Metric) string {
	if !p.victimSLO.Measured() {
		return fmt.Sprintf("not answered under %s: %s", p.policy, p.victimSLO.Reason)
	}
	s := fmt.Sprintf("under %s the victim met its SLO on %s of %d requests beside the aggressor against %s of %d alone",
		p.policy, result.Format(p.victimSLO), p.victimSLO.N, result.Short(p.victimAlone), p.victimAlone.N)
	if p.ratio.State == result.Measured || p.ratio.State == result.Bound {
		s += fmt.Sprintf("; its p99 TTFT was %s its alone value (%s alone, %s beside it)", result.Short(p.ratio), result.ShortN(p.alone), result.ShortN(p.contended))
	} else {
		s += "; the ratio of its p99 TTFTs is not measurable: " + p.ratio.Reason
	}
	for _, o := range isos {
		if o.policy != p.policy {
			s += fmt.Sprintf("; under %s %s (p99 %s)", o.policy, result.Short(o.victimSLO), ratioText(o.ratio))
		}
	}
	return s
}

// ratioText is the interference ratio for a sentence.
func ratioText(m result.Metric) string {
	switch m.State {
	case result.Measured, result.Bound:
		return result.Short(m) + " alone"
	}
	return "ratio not measurable"
}

func isolationTable(isos []isolation) result.Table {
	t := result.Table{Key: TableIsolation, Title: "Isolation per policy", Note: "victim SLO attainment with its 95 % Wilson interval; interference ratio: the victim's contended p99 TTFT ÷ its p99 alone under the same policy, a failed request counting as +∞; a p99 of fewer than 100 requests is only a lower bound",
		Columns: []string{"policy", "victim SLO attainment contended", "alone", "victim p99 TTFT alone (this policy)", "contended", "interference ratio", "Jain's index", "aggressor 429s"}}
	for _, m := range isos {
		t.AddRow(result.Text(m.policy), result.Of(m.victimSLO), result.Of(m.victimAlone), result.Of(m.alone), result.Of(m.contended),
			result.Of(m.ratio), result.Of(m.jain), result.Of(m.n429))
	}
	return t
}

// measure folds one policy's two phases.
func (q *q3) measure(pol string, byPhase map[string][]record.Request, dur map[string]float64, out *workload.Outcome, ten *result.Table) isolation {
	v := q.cfg.Victim.Tenant
	m := isolation{policy: pol}
	for _, kind := range []string{phaseAlone, phaseContended} {
		rs, secs := byPhase[pol+"."+kind], dur[pol+"."+kind]
		shares := q.fairShares(rs, secs)
		for _, tn := range []string{v, q.cfg.Aggressor.Tenant} {
			sel := reqset.Where(rs, reqset.IsTenant(tn))
			if l, ok := reqset.BenchLine("policy="+pol+"/phase="+kind+"/tenant="+tn, sel, secs); ok {
				out.Bench = append(out.Bench, l)
			}
			if len(sel) > 0 {
				ten.AddRow(tenantRow(pol, kind, tn, sel, secs, shares[tn])...)
			}
		}
		vs := reqset.Where(rs, reqset.IsTenant(v))
		ttft := reqset.TailOf(vs, tailQ, reqset.TTFT)
		if kind == phaseAlone {
			m.alone = ttft.Metric(defAlone, "no victim request was sent alone")
			m.victimAlone = reqset.Attainment(defVictimAlone, vs, "no victim request was sent alone")
			continue
		}
		m.contended = ttft.Metric(defContended, "no victim request was sent beside the aggressor")
		m.victimSLO = reqset.Attainment(defVictimSLO, vs, "no victim request was sent beside the aggressor")
		agg := reqset.Where(rs, reqset.IsTenant(q.cfg.Aggressor.Tenant))
		m.n429 = def429.Measure(float64(len(reqset.Where(agg, func(r *record.Request) bool { return r.Status == 429 }))), len(agg), "no aggressor request")
		m.jain = jainMetric(shares)
	}
	return m
}

// tenantRow is one tenant's row of the Tenants table.
func tenantRow(pol, kind, tn string, sel []record.Request, secs float64, sh share) []result.Cell {
	s := reqset.Measure(sel)
	n429 := len(reqset.Where(sel, func(r *record.Request) bool { return r.Status == 429 }))
	fair, x := result.Text("–"), result.Text("–")
	if sh.fair > 0 {
		fair = result.Of(defGoodput.Measure(sh.fair, s.N, ""))
		x = result.Of(defShare.Measure(sh.goodput/sh.fair, s.N, ""))
	}
	return []result.Cell{result.Text(pol), result.Text(kind), result.Text(tn), result.Textf("%d", s.N), result.Textf("%d", s.OK), result.Textf("%d", n429),
		result.Of(reqset.TailOf(sel, tailQ, reqset.TTFT).Metric(defTTFT, "none sent")), result.Of(reqset.TailOf(sel, tailQ, reqset.E2E).Metric(defE2E, "none sent")),
		result.Of(reqset.Attainment(defAttain, sel, "none sent")), result.Of(defGoodput.Measure(s.Goodput(seconds(secs)), s.N, "")), fair, x}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Recompute computes the result from the run's records alone: the
// policies that ran are those whose contended phase it records
// (<policy>.contended; Run counts a policy once both its phases ran), in
// their order.
func (q *q3) Recompute(rec workload.Records) (result.Result, error) {
	var ran []string
	for _, p := range rec.Phases {
		pol, kind, ok := strings.Cut(p.Name, ".")
		if ok && kind == phaseContended && !slices.Contains(ran, pol) {
			ran = append(ran, pol)
		}
	}
	return q.outcome(workload.Outcome{Phases: rec.Phases}, ran, rec.Requests).Result, nil
}
