package q1

import (
	"fmt"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/record"

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
		s.stageMs[j] = append(s.stageMs[j], record.Millis(h.Ended.Sub(h.Enqueued)))
		s.queueMs[j] = append(s.queueMs[j], record.Millis(h.Queue()))
		queue += record.Millis(h.Queue())
		if c, ok := t.Call(h.Stage); ok {
			op += record.Millis(h.Service() - c.End.Sub(c.Start)) // decoding, encoding, prompt building
		}
	}
	sink := record.Millis(received.Sub(res.Hops[len(res.Hops)-1].Ended))
	s.overhead = append(s.overhead, max(queue+op+sink, 0))
	for k, v := range []float64{queue, op, sink} {
		s.parts[k] = append(s.parts[k], v)
	}
	s.lag = append(s.lag, record.Millis(accepted.Sub(intended)))
	s.e2e = append(s.e2e, record.Millis(received.Sub(intended)))
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

func sum(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}
