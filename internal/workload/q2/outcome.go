package q2

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
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
// policy, type and class; one unified row and the metrics per policy;
// the answer, per policy on the critical class.
func (q *q2) outcome(out workload.Outcome, ran []ranPhase, rs []record.Request, env *workload.Env, qs *queueSampler) workload.Outcome {
	out.Notes = append(out.Notes, fmt.Sprintf("parallelism %d does not change Q2 (open loop at the schedule's rate; the stack's slots set its concurrency) and the backend only labels the records",
		env.Parallelism))
	if !env.Target.IsEmbedded() {
		out.Notes = append(out.Notes, "q2.stack sizes the embedded pool only: against this target, whether the offered rate fills its queue — what lets policies differ — is its own capacity's doing (see llm_queue_busy)")
	}
	q.fill(&out, ran, rs, qs)
	if f, err := qs.file(); err == nil {
		out.Files = append(out.Files, f)
	}
	return out
}

// figures is the result of the sub-runs ran, their records rs and the
// queue gauge's samples qs.
func (q *q2) figures(ran []ranPhase, rs []record.Request, qs *queueSampler) result.Result {
	var out workload.Outcome
	q.fill(&out, ran, rs, qs)
	return out.Result
}

// fill writes into out the bench lines, rows and result of the sub-runs.
func (q *q2) fill(out *workload.Outcome, ran []ranPhase, rs []record.Request, qs *queueSampler) {
	out.Bench = []record.BenchLine{}
	byPhase := splitByPhase(rs)
	for _, p := range ran {
		out.Bench = append(out.Bench, q.phaseBench(p, byPhase[p.Name])...)
	}
	var pols []policyFigures
	for _, policy := range policiesRun(ran) {
		f := q.policyResult(policy, ran, byPhase, qs)
		pols = append(pols, f)
		out.Rows = append(out.Rows, f.row)
	}
	out.Result = q.result(pols)
	out.Result.Metrics = append(out.Result.Metrics, q.boundMetrics()...)
	out.Result.Tables = append(out.Result.Tables, policyTable(pols), depthTable(ran, byPhase, qs))
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
// second: from X-Sagebench-Queue-Us, else the target's queue gauge.
func depthTable(ran []ranPhase, byPhase map[string][]record.Request, qs *queueSampler) result.Table {
	t := result.Table{Key: TableQueueDepth, Title: "LLM queue depth over time", Note: "mean depth per second of each policy's first round, from X-Sagebench-Queue-Us, else the mean of the target's queue gauge samples in each second",
		Columns: []string{"policy", "source", "depth per second"}}
	for _, p := range ran {
		if p.round != 0 {
			continue
		}
		llm := reqset.Where(byPhase[p.Name], reqset.IsType(protocol.TypeLLM))
		depths, source := reqset.Depth(llm, p.Start, p.End, time.Second), "X-Sagebench-Queue-Us"
		if !hasQueue(llm) {
			depths, source = gaugeDepth(qs, p.Start, p.End)
		}
		if depths == nil {
			t.AddRow(result.Text(p.policy), result.Text("–"), result.Text("– ("+qs.why()+")"))
			continue
		}
		var b strings.Builder
		for i, d := range depths {
			if i > 0 {
				b.WriteByte(' ')
			}
			if math.IsNaN(d) {
				b.WriteString("–")
				continue
			}
			fmt.Fprintf(&b, "%.0f", d)
		}
		t.AddRow(result.Text(p.policy), result.Text(source), result.Text(b.String()))
	}
	return t
}

// gaugeDepth is the mean of the queue gauge's samples in each second of
// [from, to) (NaN for a second without one); nil without samples.
func gaugeDepth(qs *queueSampler, from, to time.Duration) ([]float64, string) {
	xs, name := qs.within(from, to)
	if len(xs) == 0 {
		return nil, ""
	}
	var out []float64
	for w := from; w < to; w += time.Second {
		sum, n := 0.0, 0
		for _, x := range xs {
			if x.at >= w && x.at < w+time.Second {
				sum, n = sum+x.depth, n+1
			}
		}
		out = append(out, sum/float64(max(n, 1)))
		if n == 0 {
			out[len(out)-1] = math.NaN()
		}
	}
	return out, name
}

// hasQueue reports whether any of rs carries the target's queue wait.
func hasQueue(rs []record.Request) bool {
	for i := range rs {
		if rs[i].QueueMs != nil {
			return true
		}
	}
	return false
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
