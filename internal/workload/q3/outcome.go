package q3

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/workload"
)

// isolation are one policy's Q3 figures.
type isolation struct {
	AloneP99, ContendedP99 float64 // victim TTFT p99, ms
	Ratio                  float64 // contended ÷ the alone p99 pooled over policies
	Jain                   float64 // over tenants' SLO-met ÷ offered in the contended phase
	VictimSLO              float64 // victim SLO attainment, contended
	Aggressor429           int
}

func (q *q3) outcome(out workload.Outcome, policies []string, rs []record.Request) workload.Outcome {
	out.Extra, out.Bench = map[string]float64{}, []record.BenchLine{}
	byPhase := map[string][]record.Request{}
	for _, r := range rs {
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	dur := map[string]float64{}
	for _, p := range out.Phases {
		dur[p.Name] = p.Duration().Seconds()
	}
	var tbl, ten strings.Builder
	tbl.WriteString("| policy | victim p99 TTFT alone ms (this policy) | contended ms | interference ratio (÷ pooled alone) | Jain's index | victim SLO attainment | aggressor 429s |\n|---|---|---|---|---|---|---|\n")
	ten.WriteString("| policy | phase | tenant | count | ok | 429 | p99 TTFT ms | p99 E2E ms | SLO attainment | goodput req/s |\n|---|---|---|---|---|---|---|---|---|---|\n")
	// The victim alone meets no contention whatever the policy: its
	// baseline pools every policy's alone phase, so one unlucky phase of a
	// few requests does not decide a ratio.
	var alone []record.Request
	for _, pol := range policies {
		alone = append(alone, reqset.Where(byPhase[pol+"."+phaseAlone], reqset.IsTenant(q.cfg.Victim.Tenant))...)
	}
	base := reqset.Measure(alone).TTFTP99
	out.Extra["victim_ttft_p99_alone_ms"] = base
	primary := ""
	for _, pol := range policies {
		m := q.measure(pol, byPhase, dur, &out, &ten)
		m.Ratio = m.ContendedP99 / base
		x := out.Extra
		x[pol+".interference_ratio"], x[pol+".victim_ttft_p99_alone_ms"], x[pol+".victim_ttft_p99_contended_ms"] = m.Ratio, m.AloneP99, m.ContendedP99
		x[pol+".jain_fairness"], x[pol+".victim_slo_attainment"], x[pol+".aggressor_429"] = m.Jain, m.VictimSLO, float64(m.Aggressor429)
		if primary == "" || pol == protocol.PolicyFairShare {
			primary, x["primary"] = pol, m.Ratio
		}
		fmt.Fprintf(&tbl, "| %s | %s | %s | %s | %.3f | %.1f%% | %d |\n", pol, num(m.AloneP99, "%.0f"), num(m.ContendedP99, "%.0f"),
			num(m.Ratio, "%.2f"), m.Jain, 100*m.VictimSLO, m.Aggressor429)
		cont := byPhase[pol+"."+phaseContended]
		all := reqset.Measure(cont)
		out.Rows = append(out.Rows, workload.Row{Config: "policy=" + pol, Throughput: float64(all.OK) / max(dur[pol+"."+phaseContended], 1e-9),
			LatencyP50: all.E2EP50, LatencyP95: all.E2EP95, LatencyP99: all.E2EP99, SuccessRate: all.SuccessRate, DurationSeconds: dur[pol+"."+phaseContended],
			Metadata: map[string]any{"policy": pol, "interference_ratio": finite(m.Ratio), "jain_fairness": m.Jain,
				"victim_slo_attainment": m.VictimSLO, "aggressor_429": m.Aggressor429}})
	}
	if primary != "" {
		out.Notes = append(out.Notes, "primary metric: the victim's interference ratio under "+primary)
	}
	for k, v := range out.Extra {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(out.Extra, k)
		}
	}
	out.Sections = append(out.Sections, workload.Section{Title: "Isolation per policy", Body: tbl.String()},
		workload.Section{Title: "Tenants", Body: ten.String()})
	return out
}

// measure folds one policy's two phases.
func (q *q3) measure(pol string, byPhase map[string][]record.Request, dur map[string]float64, out *workload.Outcome, ten *strings.Builder) isolation {
	var m isolation
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
			fmt.Fprintf(ten, "| %s | %s | %s | %d | %d | %d | %s | %s | %.1f%% | %.2f |\n", pol, kind, tn, s.N, s.OK, n429,
				num(s.TTFTP99, "%.0f"), num(s.E2EP99, "%.0f"), 100*s.SLOAttainment, s.Goodput(seconds(secs)))
			switch {
			case kind == phaseAlone && tn == q.cfg.Victim.Tenant:
				m.AloneP99 = s.TTFTP99
			case kind == phaseContended && tn == q.cfg.Victim.Tenant:
				m.ContendedP99, m.VictimSLO = s.TTFTP99, s.SLOAttainment
			case kind == phaseContended:
				m.Aggressor429 = n429
			}
			if kind == phaseContended {
				shares = append(shares, s.SLOAttainment) // goodput ÷ demand over the same phase
			}
		}
	}
	m.Jain = Jain(shares)
	return m
}

// Jain is Jain's fairness index of xs: (Σx)² ÷ (n·Σx²), 1 when all are
// equal, 1/n when one gets everything; 1 for no values or all zero.
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if len(xs) == 0 || s2 == 0 {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

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
