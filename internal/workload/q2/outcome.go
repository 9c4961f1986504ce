package q2

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// ranPhase is a sub-run that happened: its policy and round.
type ranPhase struct {
	summary.Phase
	policy string
	round  int
}

// outcome adds to out what Q2 reports on its own: bench lines per round,
// policy, type and class; one unified row and Extra metrics per policy;
// the policy table with the gateway queue's occupancy.
func (q *q2) outcome(out workload.Outcome, ran []ranPhase, rs []record.Request, env *workload.Env) workload.Outcome {
	out.Notes = append(out.Notes, fmt.Sprintf("parallelism %d does not change Q2 (open loop at the schedule's rate; the stack's slots set its concurrency) and the backend only labels the records",
		env.Parallelism))
	out.Extra = map[string]float64{}
	out.Bench = []record.BenchLine{}
	byPhase := splitByPhase(rs)
	for _, p := range ran {
		out.Bench = append(out.Bench, q.phaseBench(p, byPhase[p.Name])...)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| policy | critical p99 TTFT ms | normal p99 TTFT ms | background p99 TTFT ms | LLM queue busy | mean queue depth | max depth | critical queue p99 ms | goodput req/s | SLO attainment |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, policy := range policiesRun(ran) {
		q.policyResult(&out, &table, policy, ran, byPhase)
	}
	out.Sections = append(out.Sections, workload.Section{Title: "Policies (pooled over rounds; queue from X-Sagebench-Queue-Us)", Body: table.String()},
		workload.Section{Title: "LLM queue depth over time (mean per second, first round)", Body: depthTable(ran, byPhase)})
	return out
}

// splitByPhase groups rs by phase. A run's records are large and its
// sub-runs follow one another, so a phase whose records are contiguous in
// rs (the usual case) is a sub-slice of it, not a copy; the groups are
// only read.
func splitByPhase(rs []record.Request) map[string][]record.Request {
	type span struct{ first, last, n int }
	spans := map[string]*span{}
	for i := range rs {
		sp := spans[rs[i].Phase]
		if sp == nil {
			sp = &span{first: i}
			spans[rs[i].Phase] = sp
		}
		sp.last, sp.n = i, sp.n+1
	}
	byPhase := make(map[string][]record.Request, len(spans))
	for p, sp := range spans {
		if sp.last-sp.first+1 == sp.n {
			byPhase[p] = rs[sp.first : sp.last+1 : sp.last+1]
			continue
		}
		byPhase[p] = make([]record.Request, 0, sp.n)
	}
	for i := range rs {
		if g := byPhase[rs[i].Phase]; cap(g) > len(g) {
			byPhase[rs[i].Phase] = append(g, rs[i])
		}
	}
	return byPhase
}

// where is reqset.Where, without the copy when every record is kept
// (an embeddings-only run's "type=embedding" is all of it); the result is
// only read.
func where(rs []record.Request, keep func(*record.Request) bool) []record.Request {
	for i := range rs {
		if !keep(&rs[i]) {
			return reqset.Where(rs, keep)
		}
	}
	return rs
}

// depthTable gives each policy's first sub-run's LLM queue depth per
// second.
func depthTable(ran []ranPhase, byPhase map[string][]record.Request) string {
	var b strings.Builder
	for _, p := range ran {
		if p.round != 0 {
			continue
		}
		ds := reqset.Depth(reqset.Where(byPhase[p.Name], reqset.IsType(protocol.TypeLLM)), p.Start, p.End, time.Second)
		fmt.Fprintf(&b, "- %s:", p.policy)
		for _, d := range ds {
			fmt.Fprintf(&b, " %.0f", d)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func policiesRun(ran []ranPhase) []string {
	var ps []string
	seen := map[string]bool{}
	for _, p := range ran {
		if !seen[p.policy] {
			seen[p.policy] = true
			ps = append(ps, p.policy)
		}
	}
	return ps
}

// policyResult pools a policy's rounds into its Extra metrics, unified
// row and table line.
func (q *q2) policyResult(out *workload.Outcome, table *strings.Builder, policy string, ran []ranPhase, byPhase map[string][]record.Request) {
	var rs, llm []record.Request
	var busy, depth float64
	maxDepth := 0
	var dur float64
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
		o := reqset.Busy(pl, p.Start, p.End)
		busy += o.Busy * p.Duration().Seconds()
		depth += o.MeanDepth * p.Duration().Seconds()
		maxDepth = max(maxDepth, o.MaxDepth)
		dur += p.Duration().Seconds()
	}
	if dur > 0 {
		busy, depth = busy/dur, depth/dur
	}
	all := reqset.Measure(rs)
	ttft := map[string]float64{}
	for _, k := range q.cfg.Classes {
		ttft[k.Priority] = reqset.Measure(reqset.Where(llm, reqset.IsPriority(k.Priority))).TTFTP99
	}
	crit := reqset.Measure(reqset.Where(llm, reqset.IsPriority(protocol.PriorityCritical)))
	goodput := 0.0
	if dur > 0 {
		goodput = float64(all.Met) / dur
	}
	x := out.Extra
	x[policy+".critical_ttft_p99_ms"], x[policy+".llm_queue_busy"] = crit.TTFTP99, busy
	x[policy+".llm_queue_depth_mean"], x[policy+".llm_queue_depth_max"] = depth, float64(maxDepth)
	x[policy+".goodput"], x[policy+".slo_attainment"] = goodput, all.SLOAttainment
	for k, v := range x {
		if math.IsNaN(v) {
			delete(x, k) // JSON has no NaN: a class that sent nothing has no quantile
		}
	}
	out.Rows = append(out.Rows, workload.Row{Config: "policy=" + policy,
		Throughput: float64(all.OK) / max(dur, 1e-9), LatencyP50: all.E2EP50, LatencyP95: all.E2EP95, LatencyP99: all.E2EP99,
		SuccessRate: all.SuccessRate, DurationSeconds: dur,
		Metadata: map[string]any{"policy": policy, "goodput": goodput, "slo_attainment": all.SLOAttainment,
			"critical_ttft_p99_ms": finite(crit.TTFTP99), "llm_queue_busy": busy, "llm_queue_depth_mean": depth}})
	fmt.Fprintf(table, "| %s | %s | %s | %s | %.0f%% | %.1f | %d | %s | %.2f | %.1f%% |\n", policy,
		ms(ttft[protocol.PriorityCritical]), ms(ttft[protocol.PriorityNormal]), ms(ttft[protocol.PriorityBackground]),
		100*busy, depth, maxDepth, ms(crit.QueueP99), goodput, 100*all.SLOAttainment)
}

// phaseBench gives a round's bench lines: per type, then per type and
// class.
func (q *q2) phaseBench(p ranPhase, rs []record.Request) []record.BenchLine {
	var lines []record.BenchLine
	for _, typ := range []string{protocol.TypeLLM, protocol.TypeEmbedding} {
		of := where(rs, reqset.IsType(typ))
		base := "policy=" + p.policy + "/type=" + typ
		lines = appendLine(lines, base, of, p.Duration().Seconds())
		for _, k := range q.cfg.Classes {
			lines = appendLine(lines, base+"/priority="+k.Priority, where(of, reqset.IsPriority(k.Priority)), p.Duration().Seconds())
		}
	}
	return lines
}

func appendLine(lines []record.BenchLine, name string, rs []record.Request, secs float64) []record.BenchLine {
	if l, ok := reqset.BenchLine(name, rs, secs); ok {
		lines = append(lines, l)
	}
	return lines
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

// finite maps NaN (no values) to nil for JSON.
func finite(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}
