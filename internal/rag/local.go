package rag

import (
	"context"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/openai"
)

// HarnessEngine is the engine a harness-side retrieve reports.
const HarnessEngine = "harness-index"

// LocalRetrieval is a Client whose Retrieve searches a local index of the
// corpus (exact k-nearest neighbours) instead of the target's
// /v1/retrieve, for a target that has none; Embed and Chat go to the
// target. The retrieve call's timing is the local search's, and its
// Engine says HarnessEngine.
type LocalRetrieval struct {
	Client
	Index *corpus.Corpus
	Now   func() time.Time // nil → time.Now
}

// Retrieve answers from the local index; a query by text is refused
// (the operators always send the embedding).
func (l LocalRetrieval) Retrieve(ctx context.Context, req openai.RetrieveRequest) openai.Result {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	res := openai.Result{Start: now(), Engine: HarnessEngine}
	res.Sent = res.Start
	if err := ctx.Err(); err != nil {
		res.End, res.Err, res.ErrClass = now(), err, openai.ClassCanceled
		return res
	}
	hits, err := l.Index.Exact(req.Embedding, req.TopK)
	res.End = now()
	res.FirstByte = res.End
	if err != nil {
		res.Err, res.ErrClass = err, openai.ClassMalformed
		return res
	}
	res.Status = 200
	res.Docs = make([]openai.Doc, len(hits))
	for i, h := range hits {
		res.Docs[i] = openai.Doc{ID: h.ID, Score: float64(h.Score), Text: h.Text}
	}
	return res
}
