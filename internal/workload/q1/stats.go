package q1

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/rag"
)

// q1Stats accumulates, over the successful transactions, the per-stage
// breakdown (time in the stage, queueing), the runtime's own overhead and
// what recall@k needs. It is safe for concurrent use.
type q1Stats struct {
	mu       sync.Mutex
	graph    dataflow.Graph
	stageMs  [][]float64  // [stage][txn]: enqueued → emitted
	queueMs  [][]float64  // [stage][txn]: enqueued → started
	overhead []float64    // per txn: queueing + operator time outside its call + sink hop
	parts    [3][]float64 // per txn: the overhead's queueing, operator and sink parts
	lag      []float64    // per txn: intended → accepted by the runtime (the source's schedule lag)
	e2e      []float64

	// recall@k: measurable on the embedded stack as long as every returned
	// document is the local corpus's document of that id.
	ix        *corpus.Corpus
	k         int
	measure   bool
	mismatch  string
	vecs      [][]float32
	hitIDs    [][]int
	sourceDoc []int
}

func newQ1Stats(g dataflow.Graph, embedded bool, ix *corpus.Corpus, k int) *q1Stats {
	n := len(g.Stages)
	return &q1Stats{graph: g, stageMs: make([][]float64, n), queueMs: make([][]float64, n),
		ix: ix, k: k, measure: embedded && ix != nil}
}

func (s *q1Stats) add(res dataflow.Record, t *rag.Txn, intended, accepted, received time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(res.Hops) != len(s.stageMs) {
		return
	}
	var queue, op float64
	for j, h := range res.Hops {
		s.stageMs[j] = append(s.stageMs[j], ms(h.Ended.Sub(h.Enqueued)))
		s.queueMs[j] = append(s.queueMs[j], ms(h.Queue()))
		queue += ms(h.Queue())
		if c, ok := t.Call(h.Stage); ok {
			op += ms(h.Service() - c.End.Sub(c.Start)) // decoding, encoding, prompt building
		}
	}
	sink := ms(received.Sub(res.Hops[len(res.Hops)-1].Ended))
	s.overhead = append(s.overhead, max(queue+op+sink, 0))
	for k, v := range []float64{queue, op, sink} {
		s.parts[k] = append(s.parts[k], v)
	}
	s.lag = append(s.lag, ms(accepted.Sub(intended)))
	s.e2e = append(s.e2e, ms(received.Sub(intended)))
	s.keepForRecall(t)
}

func (s *q1Stats) keepForRecall(t *rag.Txn) {
	if !s.measure || s.mismatch != "" {
		return
	}
	ids := make([]int, len(t.Hits))
	for i, h := range t.Hits {
		if s.ix.Doc(h.ID) != h.Text {
			s.mismatch = fmt.Sprintf("document %d returned by retrieve is not the local corpus's document %d", h.ID, h.ID)
			return
		}
		ids[i] = h.ID
	}
	ids = ids[:min(len(ids), s.k)] // recall@k: hits beyond the k best do not count
	s.vecs, s.hitIDs, s.sourceDoc = append(s.vecs, t.Vector), append(s.hitIDs, ids), append(s.sourceDoc, t.QueryDoc)
}

// percentile is the nearest-rank q-quantile of xs (NaN when empty).
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

func sum(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}

// report returns the breakdown as summary extras and as note lines for
// the terminal table and summary.md.
func (r *q1Run) report() (map[string]float64, []string) {
	s := r.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	extra := map[string]float64{"top_k": float64(r.cfg.TopK)}
	set := func(k string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			extra[k] = v
		}
	}
	if len(s.e2e) == 0 {
		return extra, append([]string{"per-stage breakdown: no transaction succeeded"}, s.recallNotes(set)...)
	}
	notes := []string{fmt.Sprintf("per-stage breakdown over %d successful transactions (ms; stage = queueing + service in the runtime; share of mean E2E):", len(s.e2e))}
	totalE2E := sum(s.e2e)
	var warn []string
	for j, st := range s.graph.Stages {
		p50, p99 := percentile(s.stageMs[j], 0.5), percentile(s.stageMs[j], 0.99)
		q50, q99 := percentile(s.queueMs[j], 0.5), percentile(s.queueMs[j], 0.99)
		share, par := sum(s.stageMs[j])/totalE2E, stageParallelism(s.graph, st)
		pre := "stage_" + st.Name + "_"
		set(pre+"p50_ms", p50)
		set(pre+"p99_ms", p99)
		set(pre+"share", share)
		set(pre+"queue_p50_ms", q50)
		set(pre+"queue_p99_ms", q99)
		set(pre+"parallelism", float64(par))
		notes = append(notes, fmt.Sprintf("  stage %-9s p50 %9.2f  p99 %9.2f  share %5.1f%%  queueing p50 %8.3f  p99 %8.3f  (%d workers)",
			st.Name, p50, p99, 100*share, q50, q99, par))
		if q50 > p50-q50 && len(s.queueMs[j]) > 0 {
			busy := (sum(s.stageMs[j]) - sum(s.queueMs[j])) / float64(len(s.stageMs[j])) / 1000 // mean service, s
			warn = append(warn, fmt.Sprintf("stage %s is saturated (median queueing above median service): at %.1f tx/s and %.0f ms mean service it needs ≥ %d workers (Little's law), it has %d; raise --parallelism or q1.graph.stages[%d].parallelism",
				st.Name, r.rate, 1000*busy, int(math.Ceil(r.rate*busy)), par, j))
		}
	}
	l50, l99 := percentile(s.lag, 0.5), percentile(s.lag, 0.99)
	set("source_lag_p50_ms", l50)
	set("source_lag_p99_ms", l99)
	notes = append(notes, fmt.Sprintf("  source (intended → accepted) p50 %8.3f  p99 %9.3f  share %5.1f%%   sink hop p50 %.3f",
		l50, l99, 100*sum(s.lag)/totalE2E, percentile(s.parts[2], 0.5)))
	o50, e50 := percentile(s.overhead, 0.5), percentile(s.e2e, 0.5)
	set("runtime_overhead_p50_ms", o50)
	set("runtime_overhead_p99_ms", percentile(s.overhead, 0.99))
	set("runtime_overhead_share", o50/e50)
	for k, name := range []string{"queue", "operator", "sink"} {
		set("runtime_overhead_"+name+"_p50_ms", percentile(s.parts[k], 0.5))
	}
	notes = append(notes, fmt.Sprintf("runtime overhead (queueing + operator time outside the HTTP calls + sink hop): p50 %.3f ms = %.3f%% of the E2E p50 %.1f ms",
		o50, 100*o50/e50, e50))
	notes = append(notes, warn...)
	return extra, append(notes, s.recallNotes(set)...)
}

// recallNotes computes recall@k of what retrieve returned against exact
// search on the local corpus, and how often the question's source
// document was among the hits.
func (s *q1Stats) recallNotes(set func(string, float64)) []string {
	switch {
	case !s.measure:
		return []string{"recall@k: not measurable against an external target (its index is not the local corpus)"}
	case s.mismatch != "":
		return []string{"recall@k: not measurable: " + s.mismatch + " (target.stack_config has a different index than q1.index?)"}
	case len(s.vecs) == 0:
		return []string{"recall@k: not measurable: no transaction retrieved documents"}
	}
	var recall, relevant, found float64
	for i, v := range s.vecs {
		exact, err := s.ix.Exact(v, s.k)
		if err != nil {
			return []string{"recall@k: not measurable: " + err.Error()}
		}
		relevant += float64(len(exact)) // k, or the corpus size when smaller
		for _, h := range exact {
			if slices.Contains(s.hitIDs[i], h.ID) {
				recall++
			}
		}
		if slices.Contains(s.hitIDs[i], s.sourceDoc[i]) {
			found++
		}
	}
	n := float64(len(s.vecs))
	recall /= relevant
	set("recall_at_k", recall)
	set("source_doc_retrieved", found/n)
	return []string{fmt.Sprintf("recall@%d against exact search on the same corpus: %.3f over %d transactions; the question's source document was retrieved in %.1f%%",
		s.k, recall, len(s.vecs), 100*found/n)}
}
