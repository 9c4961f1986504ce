package q1

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/record"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/rag"
)

// q1Collect gathers, while the run goes, one row per successful
// transaction: what its stage breakdown, the runtime's overhead and
// recall@k are computed from. It is safe for concurrent use; seal ends
// it.
type q1Collect struct {
	mu       sync.Mutex
	graph    dataflow.Graph
	rows     []txnRow
	ix       *corpus.Corpus
	k        int
	measure  bool   // recall@k: the target's index is the local corpus
	mismatch string // a returned document that is not the local corpus's
	vecs     map[int][]float32
	seen     map[int]bool // the transactions with a row
}

func newQ1Collect(g dataflow.Graph, embedded bool, ix *corpus.Corpus, k int) *q1Collect {
	return &q1Collect{graph: g, ix: ix, k: k, measure: embedded && ix != nil, vecs: map[int][]float32{}, seen: map[int]bool{}}
}

// add keeps transaction seq's row; a result whose hops are not one per
// stage is left out.
func (c *q1Collect) add(seq int, res dataflow.Record, t *rag.Txn, intended, accepted, received time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.graph.Stages)
	if len(res.Hops) != n || n == 0 || c.seen[seq] {
		return // a second result of seq is not recorded either (finish)
	}
	c.seen[seq] = true
	row := txnRow{Seq: seq, QueueMs: make([]float64, n), stageMs: make([]float64, n), SourceDoc: t.QueryDoc}
	for j, h := range res.Hops {
		row.stageMs[j] = record.Millis(h.Ended.Sub(h.Enqueued))
		row.QueueMs[j] = record.Millis(h.Queue())
		if call, ok := t.Call(h.Stage); ok {
			row.OperatorMs += record.Millis(h.Service() - call.End.Sub(call.Start)) // decoding, encoding, prompt building
		}
	}
	row.SinkMs = record.Millis(received.Sub(res.Hops[n-1].Ended))
	row.lag, row.e2e = record.Millis(accepted.Sub(intended)), record.Millis(received.Sub(intended))
	row.Retrieved = c.retrieved(t)
	if c.measure && c.mismatch == "" {
		c.vecs[seq] = t.Vector
	}
	c.rows = append(c.rows, row)
}

// retrieved are the ids of t's first k hits (hits beyond the k best do
// not count for recall@k); a hit that is not the local corpus's document
// of its id makes recall not measurable. c.mu is held.
func (c *q1Collect) retrieved(t *rag.Txn) []int {
	ids := make([]int, 0, min(len(t.Hits), c.k))
	for _, h := range t.Hits[:min(len(t.Hits), c.k)] {
		if c.measure && c.mismatch == "" && c.ix.Doc(h.ID) != h.Text {
			c.mismatch = fmt.Sprintf("document %d returned by retrieve is not the local corpus's document %d", h.ID, h.ID)
		}
		ids = append(ids, h.ID)
	}
	return ids
}

// recallWhy says why recall@k is not measurable ("" when it is, as far
// as the run knows before exact search). c.mu is held.
func (c *q1Collect) recallWhy() string {
	switch {
	case !c.measure:
		return whyExternal
	case c.mismatch != "":
		return c.mismatch + " (target.stack_config has a different index than q1.index?)"
	}
	return ""
}

const whyExternal = "the target's index is not the local corpus (an external target)"

// seal ends the collection: the rows in transaction order, each with the
// ground truth of its recall@k (exact search on the local corpus), as
// many as pipeline.json may hold.
func (c *q1Collect) seal() pipelineRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	slices.SortFunc(c.rows, func(a, b txnRow) int { return cmp.Compare(a.Seq, b.Seq) })
	why := c.recallWhy()
	pr := sealRows(c.k, c.rows, why, func(r txnRow) ([]int, error) {
		return exactIDs(c.ix, c.vecs[r.Seq], c.k)
	}, maxPipelineBytes)
	c.vecs = nil
	return pr
}

// exactIDs are the ids of exact search's k best documents for v on ix.
func exactIDs(ix *corpus.Corpus, v []float32, k int) ([]int, error) {
	hits, err := ix.Exact(v, k)
	if err != nil {
		return nil, err
	}
	ids := make([]int, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// q1Stats is the per-stage breakdown (time in the stage, queueing), the
// runtime's own overhead and recall@k over the rows of pipeline.json, in
// transaction order: computed by the run and again from its records.
type q1Stats struct {
	graph    dataflow.Graph
	stageMs  [][]float64  // [stage][txn]: enqueued → emitted
	queueMs  [][]float64  // [stage][txn]: enqueued → started
	overhead []float64    // per txn: queueing + operator time outside its call + sink hop
	parts    [3][]float64 // per txn: the overhead's queueing, operator and sink parts
	lag      []float64    // per txn: intended → accepted by the runtime (the source's schedule lag)
	e2e      []float64
	pipe     pipelineRecord
}

// statsOf computes the figures of pr's rows (each with its requests.jsonl
// values: e2e, lag, one time per stage of g).
func statsOf(g dataflow.Graph, pr pipelineRecord) *q1Stats {
	n := len(g.Stages)
	s := &q1Stats{graph: g, stageMs: make([][]float64, n), queueMs: make([][]float64, n), pipe: pr}
	for _, r := range pr.Rows {
		var queue float64
		for j := range n {
			s.stageMs[j] = append(s.stageMs[j], r.stageMs[j])
			s.queueMs[j] = append(s.queueMs[j], r.QueueMs[j])
			queue += r.QueueMs[j]
		}
		s.overhead = append(s.overhead, max(queue+r.OperatorMs+r.SinkMs, 0))
		for k, v := range []float64{queue, r.OperatorMs, r.SinkMs} {
			s.parts[k] = append(s.parts[k], v)
		}
		s.lag = append(s.lag, r.lag)
		s.e2e = append(s.e2e, r.e2e)
	}
	return s
}

func sum(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		t += x
	}
	return t
}
