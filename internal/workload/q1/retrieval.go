package q1

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// embedBatch is how many corpus documents go into one embeddings call.
const embedBatch = 64

// preflightTimeout bounds the /v1/retrieve preflight.
const preflightTimeout = 5 * time.Second

// hasRetrieve asks the target whether it serves /v1/retrieve with a GET,
// which no handler of a POST route runs: a server without the route
// answers 404, one with it 405 (or anything else). Only 404, 501 and a
// 405 that does not allow POST mean no; a failed probe leaves the route
// to the run, which reports the target's errors.
func hasRetrieve(ctx context.Context, t *target.Target) (bool, int) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.URL(), "/")+protocol.PathRetrieve, nil)
	if err != nil {
		return true, 0
	}
	if k := t.APIKey(); k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	resp, err := (&http.Client{Timeout: preflightTimeout}).Do(req)
	if err != nil {
		return true, 0
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusNotImplemented:
		return false, resp.StatusCode
	case resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "" && !strings.Contains(resp.Header.Get("Allow"), http.MethodPost):
		return false, resp.StatusCode
	}
	return true, resp.StatusCode
}

// targetCorpus builds the corpus of cfg with every document embedded
// through the target's /v1/embeddings, in batches, for retrieval in the
// harness: the same documents, the target's own vectors.
func (q *q1) targetCorpus(ctx context.Context, env *workload.Env, cfg corpus.Config) (*corpus.Corpus, error) {
	cfg = cfg.WithDefaults()
	docs := corpus.Documents(cfg)
	vecs := make(map[string][]float32, len(docs))
	start := time.Now()
	for i := 0; i < len(docs); i += embedBatch {
		batch := docs[i:min(i+embedBatch, len(docs))]
		res := env.Target.Client().Embed(ctx, openai.EmbedRequest{Model: q.cfg.Embedding.Model, Input: batch,
			Header: http.Header{"X-Request-Type": {rag.RequestType}}})
		if res.Err == nil && len(res.Embeddings) != len(batch) {
			res.Err = fmt.Errorf("%d embeddings for %d inputs", len(res.Embeddings), len(batch))
		}
		if res.Err != nil {
			return nil, fmt.Errorf("q1: embedding the corpus through the target for retrieval in the harness (documents %d-%d): %w", i, i+len(batch)-1, res.Err)
		}
		for k, text := range batch {
			vecs[text] = res.Embeddings[k]
		}
	}
	fmt.Fprintf(env.Log, "q1: embedded %d corpus documents through the target in %s\n", len(docs), time.Since(start).Round(time.Millisecond))
	return corpus.New(cfg, func(text string) []float32 { return vecs[text] })
}

// retrieval decides where retrieve runs: at the target when it serves
// /v1/retrieve, else in the harness over ix rebuilt with the target's
// embeddings. It returns the client the operators use, the corpus, the
// notes and whether retrieval is the harness's.
func (q *q1) retrieval(ctx context.Context, env *workload.Env, ix *corpus.Corpus) (rag.Client, *corpus.Corpus, []string, bool, error) {
	ok, status := hasRetrieve(ctx, env.Target)
	if ok {
		return env.Target.Client(), ix, nil, false, nil
	}
	local, err := q.targetCorpus(ctx, env, ix.Config())
	if err != nil {
		return nil, nil, nil, false, err
	}
	note := fmt.Sprintf("retrieval ran in the harness: the target has no %s (HTTP %d); the %d corpus documents were embedded through its /v1/embeddings and searched exactly here (stage records say engine %q)",
		"/v1/retrieve", status, local.Len(), rag.HarnessEngine)
	return rag.LocalRetrieval{Client: env.Target.Client(), Index: local}, local, []string{note}, true, nil
}
