package q1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// filePipeline is Q1's record of what its figures read that
// requests.jsonl does not hold: per transaction, the runtime's queueing,
// operator and sink times and the ids retrieval returned beside exact
// search's (the ground truth of recall@k).
const filePipeline = "pipeline.json"

// maxPipelineBytes bounds pipeline.json (its reader takes 64 MiB; a
// row is ~180 bytes at top_k 5, so ~180,000 rows fit): a run with more
// successful transactions keeps the first, by transaction, and its
// stage breakdown, overhead and recall@k say over how many.
const maxPipelineBytes = 32 << 20

// pipelineRecord is pipeline.json.
type pipelineRecord struct {
	K int `json:"k"` // top_k: the rows' retrieved and exact ids are the k best
	// RecallNotMeasurable says why recall@k is not measured ("": it is).
	RecallNotMeasurable string `json:"recall_not_measurable,omitempty"`
	// Dropped rows beyond maxPipelineBytes: the figures leave them out.
	Dropped int      `json:"dropped,omitempty"`
	Rows    []txnRow `json:"rows"`
}

// txnRow is one successful transaction's row (on the Ray backend, one
// whose retrieve stage returned documents: the times are then zero).
type txnRow struct {
	Seq int `json:"seq"` // the transaction's index, txn-<seq> in requests.jsonl
	// QueueMs is each stage's queueing in the runtime (enqueued →
	// started), in graph order.
	QueueMs []float64 `json:"queue_ms,omitempty"`
	// OperatorMs is the operators' time outside their calls (decoding,
	// encoding, building the prompt), summed over the stages.
	OperatorMs float64 `json:"operator_ms"`
	SinkMs     float64 `json:"sink_ms"` // the last stage's emit → the sink
	SourceDoc  int     `json:"source_doc"`
	Retrieved  []int   `json:"retrieved"`       // ids retrieve returned, its first k
	Exact      []int   `json:"exact,omitempty"` // exact search's k best ids (absent: recall not measurable)

	// From requests.jsonl (the run keeps the same values): the
	// transaction's e2e_ms and lag_ms and each stage's e2e_ms.
	e2e, lag float64
	stageMs  []float64
}

// sealRows is pipeline.json of rows (in transaction order): as many as
// fit in limit bytes (maxPipelineBytes), each with its exact ids when
// recall is measurable (why == ""); an exact search that fails makes it
// not measurable.
func sealRows(k int, rows []txnRow, why string, exact func(txnRow) ([]int, error), limit int) pipelineRecord {
	pr := pipelineRecord{K: k, RecallNotMeasurable: why}
	size := 0
	for i, r := range rows {
		if pr.RecallNotMeasurable == "" {
			ids, err := exact(r)
			if err != nil {
				pr.RecallNotMeasurable = err.Error()
				for j := range pr.Rows {
					pr.Rows[j].Exact = nil
				}
			}
			r.Exact = ids
		}
		b, _ := json.Marshal(r) // numbers and ints
		if size += len(b) + 1; size > limit {
			pr.Dropped = len(rows) - i
			break
		}
		pr.Rows = append(pr.Rows, r)
	}
	return pr
}

// file is pipeline.json.
func (pr pipelineRecord) file() (record.File, error) {
	if pr.Rows == nil {
		pr.Rows = []txnRow{}
	}
	b, err := json.Marshal(pr)
	return record.File{Name: filePipeline, Data: b}, err
}

// readPipeline reads pipeline.json (its size bounded by the reader).
func readPipeline(b []byte) (pipelineRecord, error) {
	var pr pipelineRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pr); err != nil {
		return pr, fmt.Errorf("%s: %w", filePipeline, err)
	}
	if record.Trailing(dec) {
		return pr, fmt.Errorf("%s: trailing data after the document", filePipeline)
	}
	if pr.K < 1 || pr.K > maxTopK || pr.Dropped < 0 {
		return pr, fmt.Errorf("%s: k %d, dropped %d: want k in [1, %d] and dropped ≥ 0", filePipeline, pr.K, pr.Dropped, maxTopK)
	}
	for i, r := range pr.Rows {
		switch {
		case r.Seq < 0 || i > 0 && r.Seq <= pr.Rows[i-1].Seq:
			return pr, fmt.Errorf("%s: row %d: seq %d; rows are one per transaction, in order", filePipeline, i, r.Seq)
		case len(r.Retrieved) > pr.K || len(r.Exact) > pr.K:
			return pr, fmt.Errorf("%s: row of %s: %d retrieved and %d exact ids; at most k = %d each", filePipeline, txnID(r.Seq), len(r.Retrieved), len(r.Exact), pr.K)
		}
	}
	return pr, nil
}

// maxTopK is q1.top_k's bound (Config.Validate).
const maxTopK = 1000

// cutNote says over how many rows the figures are, when some were
// dropped ("" when none).
func (pr pipelineRecord) cutNote() string {
	if pr.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("over the first %d of %d transactions (%s holds at most %d MiB)",
		len(pr.Rows), len(pr.Rows)+pr.Dropped, filePipeline, maxPipelineBytes>>20)
}

// recall is recall@k of the rows' retrieved ids against their exact ids,
// and the share of questions whose source document was retrieved.
func (pr pipelineRecord) recall() []result.Metric {
	why := pr.RecallNotMeasurable
	if why == "" && len(pr.Rows) == 0 {
		why = "no transaction retrieved documents"
	}
	if why != "" {
		return []result.Metric{defRecall.NotMeasurable(why), defSourceDoc.NotMeasurable(why)}
	}
	var hits, relevant, found float64
	for _, r := range pr.Rows {
		relevant += float64(len(r.Exact)) // k, or the corpus size when smaller
		for _, id := range r.Exact {
			if slices.Contains(r.Retrieved, id) {
				hits++
			}
		}
		if slices.Contains(r.Retrieved, r.SourceDoc) {
			found++
		}
	}
	n := len(pr.Rows)
	reason := fmt.Sprintf("recall@%d against exact search on the same corpus", pr.K)
	if c := pr.cutNote(); c != "" {
		reason += ", " + c
	}
	src := defSourceDoc.Measure(found/float64(n), n, "")
	if c := pr.cutNote(); c != "" {
		src = src.WithReason(c)
	}
	return []result.Metric{defRecall.Measure(hits/relevant, n, "no document was relevant").WithReason(reason), src}
}

// joinRequests fills each row's requests.jsonl values: its transaction's
// e2e_ms and lag_ms (it must have succeeded) and the e2e_ms of each stage
// of g. A row without them means the records do not hold the run.
func joinRequests(rows []txnRow, g dataflow.Graph, reqs []record.Request) error {
	txns := map[string]*record.Request{}
	stages := map[[2]string]*record.Request{}
	for i := range reqs {
		switch r := &reqs[i]; r.Kind {
		case "txn":
			txns[r.ID] = r
		case "stage":
			stages[[2]string{r.TxnID, r.Stage}] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		id := txnID(r.Seq)
		tr, ok := txns[id]
		if !ok || !tr.OK {
			return fmt.Errorf("%s row of %s: requests.jsonl has no successful transaction %s", filePipeline, id, id)
		}
		if len(r.QueueMs) != len(g.Stages) {
			return fmt.Errorf("%s row of %s: %d queue times for the graph's %d stages", filePipeline, id, len(r.QueueMs), len(g.Stages))
		}
		r.e2e, r.lag, r.stageMs = tr.E2EMs, tr.LagMs, make([]float64, len(g.Stages))
		for j, st := range g.Stages {
			sr, ok := stages[[2]string{id, st.Name}]
			if !ok {
				return fmt.Errorf("%s row of %s: requests.jsonl has no record of its stage %s", filePipeline, id, st.Name)
			}
			r.stageMs[j] = sr.E2EMs
		}
	}
	return nil
}

// errNoPipeline: the run directory lacks pipeline.json.
var errNoPipeline = errors.New(filePipeline + " is missing: the run's per-transaction runtime times and retrieved ids are not recorded (a run from before it was written?)")
