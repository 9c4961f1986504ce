package q1

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/workload"
)

// Error classes of a stage the runtime failed (besides the client's
// classes, which a failed call keeps).
const (
	ClassStageTimeout = "stage_timeout" // the stage's timeout elapsed
	ClassStagePanic   = "stage_panic"   // the operator panicked
	ClassStageError   = "stage_error"   // any other operator error
)

func within(v float64, bound time.Duration) bool { return bound <= 0 || v <= record.Millis(bound) }

// txnRecord is the transaction record without its outcome.
func (r *q1Run) txnRecord(i int, intended, accepted time.Time) record.Request {
	id := txnID(i)
	rec := record.Request{ID: id, Seq: i, Kind: "txn", Type: TypeRAG, TxnID: id, Tenant: r.cfg.Tenant,
		Model: r.cfg.LLM.Model, IntendedNS: r.env.Offset(intended), SentNS: r.env.Offset(accepted)}
	if !accepted.IsZero() && !intended.IsZero() {
		rec.LagMs = record.Millis(accepted.Sub(intended))
	}
	return rec
}

// intendedOf is transaction i's intended send, as the source scheduled it.
func (r *q1Run) intendedOf(i int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.txns[i].intended
}

// records turns a result of the graph into the transaction's record and
// one record per stage it went through. E2E counts from the intended
// send to the sink; the transaction meets its SLO when it succeeded
// within slo.e2e and each stage within its own bound.
func (r *q1Run) records(i int, res dataflow.Record, accepted, received time.Time) []record.Request {
	intended := r.intendedOf(i) // the run's own schedule: never a worker's word for it
	tr := r.txnRecord(i, intended, accepted)
	tr.EndNS, tr.E2EMs, tr.ServiceMs = r.env.Offset(received), record.Millis(received.Sub(intended)), record.Millis(received.Sub(accepted))
	t, derr := rag.DecodeTxn(res.Payload)
	if derr != nil {
		t = &rag.Txn{}
	}
	if herr := checkHops(r.graph, res.Hops); herr != nil {
		res.Hops = nil // a runtime's word the run cannot take: no stage records
		if derr == nil {
			derr = herr
		}
	}
	stages := make([]record.Request, 0, len(res.Hops))
	met := true
	gen, embed := stageOf(r.graph, rag.OpGenerate), stageOf(r.graph, rag.OpEmbed)
	in, out := r.lengths(t)
	for j := range res.Hops {
		s := r.stageRecord(i, res, t, j)
		switch s.Stage {
		case gen:
			s.InputTokens, s.OutputTokens = in, out
		case embed: // the question, in the run's tokenizer (q1.question_tokens)
			s.InputTokens = r.questionTokens[i]
		}
		met = met && s.SLOMet
		stages = append(stages, s)
	}
	if c, ok := t.Call(gen); ok { // tokens, TTFT, TPOT, engine; the send is the source's
		sent, lag, service := tr.SentNS, tr.LagMs, tr.ServiceMs
		fillCall(&tr, r.env, intended, c)
		tr.SentNS, tr.LagMs, tr.ServiceMs, tr.FirstByte = sent, lag, service, 0
		tr.InputTokens, tr.OutputTokens = in, out
	}
	tr.OK = res.Err == nil && derr == nil
	switch {
	case res.Err != nil:
		tr.ErrorClass, tr.Status = stageErrClass(res.Err)
		tr.Error = workload.ClipError(res.Err.Error())
	case derr != nil:
		tr.ErrorClass, tr.Error = rag.ClassPayload, workload.ClipError(derr.Error())
	}
	tr.SLOMet = tr.OK && met && within(tr.E2EMs, r.cfg.SLO.E2E)
	if tr.OK {
		r.coll.add(i, res, t, intended, accepted, received)
	}
	return append([]record.Request{tr}, stages...)
}

// lengths are the intended input and output tokens of the transaction's
// generate request, in the run's tokenizer: its prompt (rag.Prompt: the
// passages retrieval returned and the question) rendered with the run's
// chat template, else counted message by message — as the server counts
// usage's prompt_tokens — and the stage's max_tokens. Zero input when
// retrieval returned nothing (the transaction failed before its prompt
// was built).
func (r *q1Run) lengths(t *rag.Txn) (in, out int) {
	if len(t.Hits) > 0 {
		in = promptTokens(r.env.Synth(), rag.Prompt(t))
	}
	return in, r.maxTokens()
}

// promptTokens is msgs' count in synth's tokenizer: rendered with its
// chat template when it has one (the message contents' sum when the
// template fails to render them).
func promptTokens(synth *shape.Synth, msgs []openai.Message) int {
	cm := chattemplate.Messages(msgs)
	if n, err := synth.CountChat(cm); err == nil {
		return n
	}
	n, _ := synth.WithTemplate(nil).CountChat(cm) // never fails without a template
	return n
}

// maxTokens is the generate stage's max_tokens: its param, else q1.llm's.
func (r *q1Run) maxTokens() int {
	for _, s := range r.graph.Stages {
		if s.Operator != rag.OpGenerate {
			continue
		}
		if n, err := strconv.Atoi(s.Params["max_tokens"]); err == nil && n > 0 {
			return n
		}
	}
	return r.cfg.LLM.MaxTokens
}

// stageOf is the name of g's stage running operator op ("" when none).
func stageOf(g dataflow.Graph, op string) string {
	for _, s := range g.Stages {
		if s.Operator == op {
			return s.Name
		}
	}
	return ""
}

// stageRecord is stage j of a result: its latency is its time in the
// runtime (enqueued → emitted), its service time the call's (sent → end),
// its lag the time from enqueued to the call's send (queueing, mostly).
func (r *q1Run) stageRecord(i int, res dataflow.Record, t *rag.Txn, j int) record.Request {
	h := res.Hops[j]
	op := ""
	var st dataflow.StageConfig
	if j < len(r.graph.Stages) {
		st = r.graph.Stages[j]
		op = st.Operator
	}
	id := txnID(i)
	rec := record.Request{ID: id + "/" + h.Stage, Seq: i, Kind: "stage", Type: stageType(op), Stage: h.Stage,
		TxnID: id, Tenant: r.cfg.Tenant, Model: r.stageModel(st), IntendedNS: r.env.Offset(h.Enqueued),
		EndNS: r.env.Offset(h.Ended), E2EMs: record.Millis(h.Ended.Sub(h.Enqueued))}
	failed := res.Err != nil && j == len(res.Hops)-1
	if c, ok := t.Call(h.Stage); ok && !failed {
		fillCall(&rec, r.env, h.Enqueued, c)
		rec.E2EMs = record.Millis(h.Ended.Sub(h.Enqueued))
		rec.OK = true
		rec.SLOMet = within(rec.E2EMs, r.cfg.SLO.stage(op))
		return rec
	}
	rec.SentNS, rec.LagMs, rec.ServiceMs = r.env.Offset(h.Started), record.Millis(h.Queue()), record.Millis(h.Service())
	if failed {
		rec.ErrorClass, rec.Status = stageErrClass(res.Err)
		rec.Error = workload.ClipError(res.Err.Message)
	} else {
		rec.ErrorClass, rec.Error = rag.ClassPayload, "the stage's call is missing from the transaction payload"
	}
	return rec
}

// fillCall copies a call's timing into rec, latencies counted from `from`.
func fillCall(rec *record.Request, env *workload.Env, from time.Time, c rag.Call) {
	rec.SentNS, rec.FirstByte, rec.FirstToken = env.Offset(c.Sent), env.Offset(c.FirstByte), env.Offset(c.FirstToken)
	rec.ServiceMs, rec.LagMs = record.Millis(c.End.Sub(c.Sent)), record.Millis(c.Sent.Sub(from))
	if len(c.Tokens) > 0 {
		rec.TokenNS = make([]int64, len(c.Tokens))
		for k, tm := range c.Tokens {
			rec.TokenNS[k] = env.Offset(tm)
		}
	}
	if !c.FirstToken.IsZero() {
		rec.TTFTMs = record.Millis(c.FirstToken.Sub(from))
		// From the tokens actually timed: a usage count may include
		// tokens never streamed (a reasoning model's, say).
		if n := len(c.Tokens); n > 1 {
			rec.TPOTMs = record.Millis(c.Tokens[n-1].Sub(c.FirstToken)) / float64(n-1)
		}
	}
	rec.Status, rec.Engine, rec.Retries = c.Status, c.Engine, c.Retries
	rec.PromptTok, rec.OutputTok = c.PromptTokens, c.CompletionTokens
}

func stageType(op string) string {
	switch op {
	case rag.OpEmbed:
		return protocol.TypeEmbedding
	case rag.OpRetrieve:
		return "retrieve"
	case rag.OpGenerate:
		return protocol.TypeLLM
	}
	return op
}

func (r *q1Run) stageModel(s dataflow.StageConfig) string {
	if m, ok := s.Params["model"]; ok {
		return m
	}
	switch s.Operator {
	case rag.OpEmbed:
		return r.cfg.Embedding.Model
	case rag.OpGenerate:
		return r.cfg.LLM.Model
	}
	return ""
}

// stageErrClass classifies a failed stage: the client's class and status
// for a failed call, else the runtime's kind.
func stageErrClass(se *dataflow.StageError) (string, int) {
	switch se.Kind {
	case dataflow.KindTimeout:
		return ClassStageTimeout, 0
	case dataflow.KindPanic:
		return ClassStagePanic, 0
	}
	if class, status, ok := rag.ParseCallError(se.Message); ok {
		return class, status
	}
	return ClassStageError, 0
}

// checkHops refuses hops a runtime (a --nodes worker: a peer) reports
// that the graph cannot have produced: more than its stages, a stage out
// of their order, an unset time, or one before the time it follows.
func checkHops(g dataflow.Graph, hops []dataflow.Hop) error {
	if len(hops) > len(g.Stages) {
		return fmt.Errorf("the runtime reports %d hops through a graph of %d stages", len(hops), len(g.Stages))
	}
	for j, h := range hops {
		switch {
		case h.Stage != g.Stages[j].Name:
			return fmt.Errorf("the runtime reports hop %d at stage %.64q, not %q", j, h.Stage, g.Stages[j].Name)
		case h.Enqueued.IsZero() || h.Ended.IsZero():
			return fmt.Errorf("the runtime reports hop %d (%s) without its enqueue or end time", j, h.Stage)
		case !h.Started.IsZero() && h.Started.Before(h.Enqueued), h.Ended.Before(h.Enqueued), !h.Started.IsZero() && h.Ended.Before(h.Started):
			return fmt.Errorf("the runtime reports hop %d (%s) ending before it started", j, h.Stage)
		}
	}
	return nil
}
