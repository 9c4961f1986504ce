package q3

import (
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Q3's metrics; the per-policy ones are named "<policy>.<name>".
var (
	defRatio     = result.Def{Name: "interference_ratio", Unit: result.Ratio, Direction: result.Lower}
	defAlone     = result.Def{Name: "victim_ttft_p99_alone_ms", Unit: result.Ms, Direction: result.Lower}
	defContended = result.Def{Name: "victim_ttft_p99_contended_ms", Unit: result.Ms, Direction: result.Lower}
	defJain      = result.Def{Name: "jain_fairness", Unit: result.Index, Direction: result.Higher}
	defVictimSLO = result.Def{Name: "victim_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	def429       = result.Def{Name: "aggressor_429", Unit: result.Count, Direction: result.Lower}
)

// defs are the metrics a q3.target may name.
var defs = []result.Def{defRatio}

// isolation are one policy's Q3 figures.
type isolation struct {
	policy                                         string
	alone, contended, ratio, jain, victimSLO, n429 result.Metric
}

func (m isolation) metrics() []result.Metric {
	var out []result.Metric
	for _, x := range []result.Metric{m.ratio, m.alone, m.contended, m.jain, m.victimSLO, m.n429} {
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
	ten := result.Table{Title: "Tenants", Columns: []string{"policy", "phase", "tenant", "count", "ok", "429", "p99 TTFT", "p99 E2E", "SLO attainment", "goodput"}}
	// The victim alone meets no contention whatever the policy: its
	// baseline pools every policy's alone phase, so one unlucky phase of a
	// few requests does not decide a ratio.
	var alone []record.Request
	for _, pol := range policies {
		alone = append(alone, reqset.Where(byPhase[pol+"."+phaseAlone], reqset.IsTenant(q.cfg.Victim.Tenant))...)
	}
	as := reqset.Measure(alone)
	base := defAlone.Measure(as.TTFTP99, as.TTFTN, "no victim request succeeded alone")
	var isos []isolation
	for _, pol := range policies {
		m := q.measure(pol, byPhase, dur, &out, &ten)
		m.ratio = ratio(m.contended, base)
		isos = append(isos, m)
		cont := reqset.Measure(byPhase[pol+"."+phaseContended])
		primary := m.ratio
		primary.Name = pol + "." + primary.Name
		d := dur[pol+"."+phaseContended]
		out.Rows = append(out.Rows, workload.Row{Config: "policy=" + pol, Throughput: record.F(float64(cont.OK) / max(d, 1e-9)),
			LatencyP50: record.Sampled(cont.E2EP50, cont.OK), LatencyP95: record.Sampled(cont.E2EP95, cont.OK), LatencyP99: record.Sampled(cont.E2EP99, cont.OK),
			SuccessRate: record.Sampled(cont.SuccessRate, cont.N), DurationSeconds: record.F(d), Primary: &primary,
			Metadata: map[string]any{"policy": pol}})
	}
	out.Result = q.result(isos, base)
	out.Result.Tables = append(out.Result.Tables, isolationTable(isos), ten)
	return out
}

// ratio is the victim's contended p99 over its alone p99: not measurable
// when either is (every contended victim request failed, say), never a
// number that reads as isolation.
func ratio(contended, alone result.Metric) result.Metric {
	switch {
	case !contended.Measured():
		return defRatio.NotMeasurable("the contended p99 is " + result.Format(contended))
	case !alone.Measured():
		return defRatio.NotMeasurable("the alone p99 is " + result.Format(alone))
	case alone.Value <= 0:
		return defRatio.NotMeasurable("the alone p99 is 0 ms")
	}
	return defRatio.Measure(contended.Value/alone.Value, contended.N, "")
}

// result names the policy whose isolation is the primary metric
// (fair_share when it ran, else the first) and answers with it against
// the others.
func (q *q3) result(isos []isolation, base result.Metric) result.Result {
	if len(isos) == 0 {
		return result.New("not answered: no policy ran", defRatio.NotMeasurable("no policy ran"))
	}
	pick := 0
	for i, m := range isos {
		if m.policy == protocol.PolicyFairShare {
			pick = i
		}
	}
	var metrics []result.Metric
	for _, m := range isos {
		metrics = append(metrics, m.metrics()...)
	}
	metrics = append(metrics, base)
	p := isos[pick]
	primary := p.ratio.In("under " + p.policy)
	return result.New(answer(p, isos, base), primary, metrics...)
}

// answer says how much the aggressor slowed the victim under the primary
// policy, and under the others.
func answer(p isolation, isos []isolation, base result.Metric) string {
	if !p.ratio.Measured() {
		return fmt.Sprintf("under %s the victim's isolation is not measurable: %s (victim SLO attainment contended %s)", p.policy, p.ratio.Reason, result.Short(p.victimSLO))
	}
	s := fmt.Sprintf("under %s the aggressor raised the victim's p99 TTFT %s (from %s alone to %s), victim SLO attainment %s",
		p.policy, result.Short(p.ratio), result.Short(base), result.Short(p.contended), result.Short(p.victimSLO))
	for _, o := range isos {
		if o.policy != p.policy {
			s += fmt.Sprintf("; under %s %s (SLO attainment %s)", o.policy, result.Short(o.ratio), result.Short(o.victimSLO))
		}
	}
	return s
}

func isolationTable(isos []isolation) result.Table {
	t := result.Table{Title: "Isolation per policy", Note: "interference ratio: the victim's contended p99 TTFT ÷ its p99 TTFT alone, pooled over policies",
		Columns: []string{"policy", "victim p99 TTFT alone (this policy)", "contended", "interference ratio", "Jain's index", "victim SLO attainment", "aggressor 429s"}}
	for _, m := range isos {
		t.AddRow(result.Text(m.policy), result.Of(m.alone), result.Of(m.contended), result.Of(m.ratio), result.Of(m.jain), result.Of(m.victimSLO), result.Of(m.n429))
	}
	return t
}

// measure folds one policy's two phases.
func (q *q3) measure(pol string, byPhase map[string][]record.Request, dur map[string]float64, out *workload.Outcome, ten *result.Table) isolation {
	m := isolation{policy: pol, alone: defAlone.NotMeasurable("no victim request alone"), contended: defContended.NotMeasurable("no victim request contended"),
		victimSLO: defVictimSLO.NotMeasurable("no victim request contended"), n429: def429.NotMeasurable("no aggressor request")}
	tenants := []string{q.cfg.Victim.Tenant, q.cfg.Aggressor.Tenant}
	var shares []float64
	for _, kind := range []string{phaseAlone, phaseContended} {
		rs := byPhase[pol+"."+kind]
		for _, tn := range tenants {
			sel := reqset.Where(rs, reqset.IsTenant(tn))
			if len(sel) == 0 {
				continue
			}
			s := reqset.Measure(sel)
			n429 := len(reqset.Where(sel, func(r *record.Request) bool { return r.Status == 429 }))
			secs := dur[pol+"."+kind]
			if l, ok := reqset.BenchLine("policy="+pol+"/phase="+kind+"/tenant="+tn, sel, secs); ok {
				out.Bench = append(out.Bench, l)
			}
			ttft := defContended.Measure(s.TTFTP99, s.TTFTN, "no request succeeded")
			e2e := result.Def{Name: "e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}.Measure(s.E2EP99, s.OK, "no request succeeded")
			ten.AddRow(result.Text(pol), result.Text(kind), result.Text(tn), result.Textf("%d", s.N), result.Textf("%d", s.OK), result.Textf("%d", n429),
				result.Of(ttft), result.Of(e2e), result.Of(defVictimSLO.Measure(s.SLOAttainment, s.N, "")),
				result.Of(result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}.Measure(s.Goodput(seconds(secs)), s.N, "")))
			switch {
			case kind == phaseAlone && tn == q.cfg.Victim.Tenant:
				m.alone = defAlone.Measure(s.TTFTP99, s.TTFTN, fmt.Sprintf("every victim request alone failed (%d of %d)", s.N-s.OK, s.N))
			case kind == phaseContended && tn == q.cfg.Victim.Tenant:
				m.contended = defContended.Measure(s.TTFTP99, s.TTFTN, fmt.Sprintf("every contended victim request failed (%d of %d)", s.N-s.OK, s.N))
				m.victimSLO = defVictimSLO.Measure(s.SLOAttainment, s.N, "")
			case kind == phaseContended:
				m.n429 = def429.Measure(float64(n429), s.N, "")
			}
			if kind == phaseContended {
				shares = append(shares, s.SLOAttainment) // goodput ÷ demand over the same phase
			}
		}
	}
	m.jain = defJain.Measure(Jain(shares), len(shares), "no tenant sent a request in the contended phase")
	return m
}

// Jain is Jain's fairness index of xs: (Σx)² ÷ (n·Σx²), 1 when all are
// equal, 1/n when one gets everything; NaN for no values or all zero
// (nothing to share: no index).
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if len(xs) == 0 || s2 == 0 {
		return math.NaN()
	}
	return s * s / (float64(len(xs)) * s2)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
