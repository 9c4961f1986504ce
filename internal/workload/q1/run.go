package q1

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/workload"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
)

// q1 is Q1 PipelineChain: each transaction runs embed → retrieve →
// generate on the dataflow runtime.
type q1 struct{ cfg *Config }

var (
	_ workload.Workload      = (*q1)(nil)
	_ workload.StackDefaults = (*q1)(nil)
)

func (q *q1) Config() workload.Config { return q.cfg }

// Plan computes the schedule without sending anything.
func (q *q1) Plan(seed int64) (workload.Plan, error) {
	s, err := load.NewSchedule(q.cfg.Schedule, seed)
	if err != nil {
		return workload.Plan{}, fmt.Errorf("q1.%w", err)
	}
	var stages []string
	for _, st := range q.cfg.Graph.Stages {
		stages = append(stages, st.Name)
	}
	lengths, err := q.cfg.questionLengths(s.Len(), seed)
	if err != nil {
		return workload.Plan{}, err
	}
	out := make([]int, len(lengths))
	for i := range out {
		out[i] = q.cfg.LLM.MaxTokens
	}
	return workload.Plan{Phases: []workload.PlannedPhase{{Name: "txn", Process: q.cfg.Schedule.Process, Requests: s.Len(),
		Rate: s.Rate(), Span: s.Span(),
		Mix: fmt.Sprintf("rag transactions: %s; top_k %d, %d output tokens", strings.Join(stages, " → "), q.cfg.TopK, q.cfg.LLM.MaxTokens),
		// The question's length; the prompt adds the top_k passages retrieved.
		Tokens: []workload.TokenDist{{Class: "question", Input: shape.Summarize(lengths), Output: shape.Summarize(out)}}}},
		Notes: []string{fmt.Sprintf("corpus: %d documents (index seed %s), the same index the embedded stack serves", q.cfg.Index.Size, q.indexSeedText())}}, nil
}

func (q *q1) indexSeedText() string {
	if q.cfg.Index.Seed == 0 {
		return "= the run's seed"
	}
	return strconv.FormatInt(q.cfg.Index.Seed, 10)
}

// deployGraph is the graph Run deploys: stages without their own
// parallelism get (graph.parallelism or --parallelism) × their width.
func (c *Config) deployGraph(parallelism int) dataflow.Graph {
	g := c.Graph
	g.Stages = append([]dataflow.StageConfig(nil), c.Graph.Stages...)
	if g.Parallelism == 0 {
		g.Parallelism = parallelism
	}
	for i, s := range g.Stages {
		if w := c.Width[s.Operator]; s.Parallelism == 0 && w > 1 {
			g.Stages[i].Parallelism = w * g.Parallelism
		}
		g.Stages[i].Params = c.stageParams(s)
	}
	return g
}

// stageParams are s's params with the models written in, so that workers
// of another process (--nodes), which know no q1 defaults, run the same
// operators; a param set in the graph wins.
func (c *Config) stageParams(s dataflow.StageConfig) map[string]string {
	p := maps.Clone(s.Params)
	if p == nil {
		p = map[string]string{}
	}
	set := func(k, v string) {
		if _, ok := p[k]; !ok {
			p[k] = v
		}
	}
	switch s.Operator {
	case rag.OpEmbed:
		set("model", c.Embedding.Model)
	case rag.OpGenerate:
		set("model", c.LLM.Model)
		set("max_tokens", strconv.Itoa(c.LLM.MaxTokens))
	}
	return p
}

// outputControl writes the target's output control into the generate
// stages' params (ignore_eos, min_tokens = max_tokens) unless the graph
// sets them: a real server then generates the answer length Q1 intends.
func outputControl(g dataflow.Graph, ctl target.OutputControl) dataflow.Graph {
	for i, s := range g.Stages {
		if s.Operator != rag.OpGenerate {
			continue
		}
		p := maps.Clone(s.Params)
		if _, ok := p["ignore_eos"]; !ok && ctl.IgnoreEOS {
			p["ignore_eos"] = "true"
		}
		if _, ok := p["min_tokens"]; !ok && ctl.MinTokens {
			p["min_tokens"] = p["max_tokens"]
		}
		g.Stages[i].Params = p
	}
	return g
}

// stageParallelism is the number of workers stage s gets in g.
func stageParallelism(g dataflow.Graph, s dataflow.StageConfig) int {
	switch {
	case s.Parallelism > 0:
		return s.Parallelism
	case g.Parallelism > 0:
		return g.Parallelism
	}
	return dataflow.DefaultParallelism
}

// Run drives the schedule into the runtime and records each transaction
// and its stages as they come out.
func (q *q1) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	sched, err := load.NewSchedule(q.cfg.Schedule, env.Seed)
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q1.%w", err)
	}
	ix, notes, err := q.corpus(ctx, env)
	if err != nil {
		return workload.Outcome{}, err
	}
	client, ix, more, harness, err := q.retrieval(ctx, env, ix)
	if err != nil {
		return workload.Outcome{}, err
	}
	notes = append(notes, more...)
	if harness && env.Dataflow != nil {
		return workload.Outcome{}, fmt.Errorf("q1: the target has no %s, and retrieval in the harness cannot run on --nodes workers; run with --nodes 1", protocol.PathRetrieve)
	}
	count := &txnCount{}
	counted := *env
	counted.Record = count.wrap(env.Record)
	r, err := newQ1Run(ctx, q.cfg, &counted, client, ix, sched.Len())
	if err != nil {
		return workload.Outcome{}, err
	}
	notes = append(notes, r.notes...)
	r.rate = sched.Rate()
	phase, err := r.run(ctx, sched)
	counts, serr := r.stop() // the engine's own counts, for the record
	if err != nil {
		return workload.Outcome{}, err
	}
	notes = append(notes, counts...)
	integrity := (*workload.IntegrityError)(nil) // forged graph messages were dropped: written, invalid
	errors.As(serr, &integrity)
	if serr != nil && (integrity == nil || serr.Error() != integrity.Error()) { // anything besides the integrity failure
		notes = append(notes, fmt.Sprintf("stopping the distributed runtime: %v", serr))
	}
	pr := r.coll.seal()
	st := statsOf(r.graph, pr)
	notes = append(notes, st.saturation(r.rate)...)
	f, err := pr.file()
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q1: %s: %w", filePipeline, err)
	}
	out := workload.Outcome{Phases: []summary.Phase{phase}, LoadMode: load.ModeOpen, Notes: notes,
		Result: q.result(phase, count, st, r.rate), Files: []record.File{f}}
	if integrity != nil {
		return out, integrity
	}
	return out, nil
}

// corpus rebuilds the target's corpus locally: the questions come from it
// and recall is measured against exact search on it. The embedding
// dimension is asked of the target with one probe request.
func (q *q1) corpus(ctx context.Context, env *workload.Env) (*corpus.Corpus, []string, error) {
	var notes []string
	dim := 384
	res := env.Target.Client().Embed(ctx, openai.EmbedRequest{Model: q.cfg.Embedding.Model,
		Input: []string{"sagebench q1 dimension probe"}, Header: http.Header{"X-Request-Type": {rag.RequestType}}})
	if res.Err == nil && len(res.Embeddings) == 1 && len(res.Embeddings[0]) >= 2 {
		dim = len(res.Embeddings[0])
	} else {
		notes = append(notes, fmt.Sprintf("the embedding probe failed (%v); the local corpus uses %d dimensions and recall@k is not measurable", res.Err, dim))
	}
	seed := q.cfg.Index.Seed
	if seed == 0 {
		seed = env.Seed
	}
	cfg := corpus.Config{Size: q.cfg.Index.Size, Dim: dim, Seed: seed}
	start := time.Now()
	ix, err := corpus.New(cfg, func(text string) []float32 { return corpus.Vector(text, dim) })
	if err != nil {
		return nil, nil, fmt.Errorf("q1: building the local corpus: %w", err)
	}
	fmt.Fprintf(env.Log, "q1: local corpus of %d documents (%d dims, seed %d) in %s\n", ix.Len(), dim, seed, time.Since(start).Round(time.Millisecond))
	return ix, notes, nil
}

// q1Run is one repetition's pipeline: the engine, the transactions in
// flight and what their results add up to.
type q1Run struct {
	cfg     *Config
	env     *workload.Env
	graph   dataflow.Graph
	eng     dataflow.Engine
	ix      *corpus.Corpus
	queries []corpus.Query
	// questionTokens are the questions' lengths in the run's tokenizer,
	// the embed stage records' input_tokens.
	questionTokens []int

	rate float64 // the schedule's, tx/s

	stop  func() ([]string, error) // releases the engine (a --nodes cluster) and says what it counted
	notes []string                 // where the engine ran

	mu      sync.Mutex
	txns    []q1Txn // by seq
	lastEnd time.Time
	coll    *q1Collect
}

// q1Txn is the source's and the sink's view of one transaction; whichever
// of the two finishes second writes its records.
type q1Txn struct {
	intended time.Time
	accepted time.Time        // Submit returned
	result   *dataflow.Record // arrived before accepted was known
	received time.Time
	done     bool
}

func newQ1Run(ctx context.Context, cfg *Config, env *workload.Env, client rag.Client, ix *corpus.Corpus, n int) (*q1Run, error) {
	qs, err := cfg.questions(ix, n, env)
	if err != nil {
		return nil, err
	}
	r := &q1Run{cfg: cfg, env: env, graph: outputControl(cfg.deployGraph(env.Parallelism), env.Target.OutputControl()), ix: ix,
		queries: qs.queries, questionTokens: qs.tokens, txns: make([]q1Txn, n), stop: func() ([]string, error) { return nil, nil }}
	r.coll = newQ1Collect(r.graph, env.Target.IsEmbedded(), ix, cfg.TopK)
	if note := qs.note(env.Synth().Tokenizer().Name()); note != "" {
		r.notes = append(r.notes, note)
	}
	if env.Dataflow != nil { // --nodes: the operators run on the workers
		eng, stop, notes, err := env.Dataflow(ctx, r.graph, env.Target.URL())
		if err != nil {
			return nil, fmt.Errorf("q1: starting the distributed runtime: %w", err)
		}
		r.eng, r.stop, r.notes = eng, stop, append(r.notes, notes...)
		return r, nil
	}
	reg := dataflow.NewRegistry()
	if err := rag.Register(reg, client, cfg.ragDefaults()); err != nil {
		return nil, err
	}
	eng, err := dataflow.NewLocal(reg, dataflow.LocalOptions{Serialize: cfg.Serialize, ExpectedRecords: n})
	if err != nil {
		return nil, err
	}
	if err := eng.Deploy(ctx, r.graph); err != nil {
		return nil, fmt.Errorf("q1.graph: %w", err)
	}
	r.eng = eng
	return r, nil
}

func txnID(seq int) string { return fmt.Sprintf("txn-%06d", seq) }

func txnSeq(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "txn-"))
	return n, err == nil && strings.HasPrefix(id, "txn-")
}

// run delivers the schedule open loop: each arrival is submitted at its
// intended time; Submit blocks while the first stage is full
// (backpressure), which shows as schedule lag. After the last arrival the
// input is closed and the graph drains; on ctx cancel the graph gets
// env.Drain, then stops, and the transactions still in it are recorded
// as cancelled.
func (r *q1Run) run(ctx context.Context, sched load.Schedule) (summary.Phase, error) {
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	served := make(chan error, 1)
	go func() { served <- r.eng.Serve(serveCtx) }()
	sunk := make(chan struct{})
	go func() {
		defer close(sunk)
		for rec := range r.eng.Results() {
			r.onResult(rec, time.Now())
		}
	}()
	d := &load.Driver{Drain: r.env.Drain, FineGap: r.env.FineGap}
	if r.env.Drain == 0 {
		d.Drain = -1
	}
	rep := d.Run(ctx, sched, r.submit)
	r.eng.CloseInput()
	err := r.wait(ctx, served, stop)
	<-sunk
	r.recordLost()
	r.mu.Lock()
	end := rep.End
	if r.lastEnd.After(end) {
		end = r.lastEnd
	}
	r.mu.Unlock()
	phase := summary.Phase{Start: rep.Start.Sub(r.env.Start), End: end.Sub(r.env.Start), Scheduled: rep.Scheduled,
		ScheduleSpan: sched.Span(), Interrupted: rep.Interrupted || ctx.Err() != nil}
	if err != nil && ctx.Err() == nil {
		return phase, fmt.Errorf("q1: runtime: %w", err)
	}
	return phase, nil
}

// wait returns when Serve has returned; once ctx is done the graph gets
// env.Drain to finish before it is stopped.
func (r *q1Run) wait(ctx context.Context, served <-chan error, stop context.CancelFunc) error {
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(r.env.Drain)
	defer t.Stop()
	select {
	case err := <-served:
		return err
	case <-t.C:
		stop()
		return <-served
	}
}

// submit is the source: it hands arrival i to the runtime.
func (r *q1Run) submit(ctx context.Context, i int, intended time.Time) {
	id := txnID(i)
	t := rag.Txn{Seq: i, Query: r.queries[i].Text, QueryDoc: r.queries[i].DocID, TopK: r.cfg.TopK}
	meta := dataflow.Metadata{Trace: id, Tenant: r.cfg.Tenant, Intended: intended}
	if r.cfg.SLO.E2E > 0 {
		meta.Deadline = intended.Add(r.cfg.SLO.E2E)
	}
	r.mu.Lock()
	r.txns[i].intended = intended
	r.mu.Unlock()
	err := r.eng.Submit(ctx, dataflow.Record{ID: id, Payload: rag.AppendTxn(nil, &t), Meta: meta})
	accepted := time.Now()
	if err != nil {
		r.finish(i, r.unsent(i, intended, accepted, err))
		return
	}
	r.env.Sent()
	r.mu.Lock()
	tx := &r.txns[i]
	tx.accepted = accepted
	res, received := tx.result, tx.received
	r.mu.Unlock()
	if res != nil {
		// Its result came out before Submit returned: the runtime had
		// accepted it by then (a service time is never negative).
		r.finish(i, r.records(i, *res, minTime(accepted, received), received))
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// onResult is the sink: it records a transaction that came out of the
// graph (or holds it until its source has recorded the accept time).
func (r *q1Run) onResult(rec dataflow.Record, received time.Time) {
	i, ok := txnSeq(rec.ID)
	if !ok || i < 0 || i >= len(r.txns) {
		fmt.Fprintf(r.env.Log, "q1: result with unknown id %q dropped\n", rec.ID)
		return
	}
	r.mu.Lock()
	tx := &r.txns[i]
	accepted := tx.accepted
	if accepted.IsZero() {
		tx.result, tx.received = &rec, received
	}
	if received.After(r.lastEnd) {
		r.lastEnd = received
	}
	r.mu.Unlock()
	if !accepted.IsZero() {
		r.finish(i, r.records(i, rec, accepted, received))
	}
}

// finish hands a transaction's records to the runner, once.
func (r *q1Run) finish(i int, recs []record.Request) {
	r.mu.Lock()
	dup := r.txns[i].done
	r.txns[i].done = true
	r.mu.Unlock()
	if dup {
		return
	}
	for _, rec := range recs {
		r.env.Record(rec)
	}
}

// recordLost records the transactions accepted by the runtime that never
// came out of it (the run was stopped) as cancelled.
func (r *q1Run) recordLost() {
	for i := range r.txns {
		r.mu.Lock()
		tx := r.txns[i]
		r.mu.Unlock()
		if tx.done || tx.accepted.IsZero() {
			continue
		}
		rec := r.txnRecord(i, tx.intended, tx.accepted)
		rec.ErrorClass, rec.Error = openai.ClassCanceled, "the run stopped before the transaction came out of the pipeline"
		r.finish(i, []record.Request{rec})
	}
}

// unsent is the record of an arrival the runtime did not accept.
func (r *q1Run) unsent(i int, intended, at time.Time, err error) []record.Request {
	rec := r.txnRecord(i, intended, time.Time{})
	rec.EndNS = r.env.Offset(at)
	rec.ErrorClass, rec.Error = openai.ClassCanceled, "not submitted to the pipeline: "+err.Error()
	return []record.Request{rec}
}
