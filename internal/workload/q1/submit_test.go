package q1

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// eager is a runtime whose result comes out before Submit returns, as a
// transaction failing at once against a broken target can.
type eager struct {
	dataflow.Engine
	r *q1Run
}

func (e eager) Submit(_ context.Context, rec dataflow.Record) error {
	e.r.onResult(dataflow.Record{ID: rec.ID, Payload: rec.Payload, Meta: rec.Meta, Err: &dataflow.StageError{Stage: "embed", Operator: "embed", Kind: dataflow.KindError, Message: "connection refused"}}, time.Now())
	time.Sleep(2 * time.Millisecond) // Submit returns well after the result
	return nil
}

// TestResultBeforeAccept: a transaction whose result came out of the
// runtime before Submit returned is recorded as accepted no later than
// its result, so its service time is never negative (it was −0.04 ms in
// a CI run of TestQ1FailingTarget).
func TestResultBeforeAccept(t *testing.T) {
	cfg := Default(true)
	t0 := time.Now()
	var recs []record.Request
	r := &q1Run{cfg: cfg, graph: cfg.deployGraph(2), queries: make([]corpus.Query, 1), questionTokens: []int{24}, txns: make([]q1Txn, 1),
		env: &workload.Env{Start: t0, Log: io.Discard, Sent: func() {}, Record: func(rec record.Request) { recs = append(recs, rec) }}}
	r.coll = newQ1Collect(r.graph, false, nil, cfg.TopK)
	r.eng = eager{r: r}
	r.submit(context.Background(), 0, t0)
	if len(recs) == 0 || recs[0].Kind != "txn" {
		t.Fatalf("records %+v, want the transaction's", recs)
	}
	if tx := recs[0]; tx.ServiceMs < 0 || tx.SentNS > tx.EndNS || tx.OK {
		t.Errorf("txn: service %v ms, sent %d ns after its end %d ns, ok %v; want a failed transaction accepted by its end", tx.ServiceMs, tx.SentNS, tx.EndNS, tx.OK)
	}
}

// forgetful is a runtime whose result comes back without the intended
// send in its metadata (a --nodes worker may send it zero).
type forgetful struct {
	dataflow.Engine
	r *q1Run
}

func (e forgetful) Submit(_ context.Context, rec dataflow.Record) error {
	go func() {
		time.Sleep(time.Millisecond)
		e.r.onResult(dataflow.Record{ID: rec.ID, Payload: rec.Payload, Err: &dataflow.StageError{Stage: "embed", Operator: "embed", Kind: dataflow.KindError, Message: "refused"}}, time.Now())
	}()
	return nil
}

// TestIntendedIsTheRunsOwn: a transaction's E2E and lag count from the
// run's own schedule, never from what a worker says it was (zero here:
// an E2E of 56 years).
func TestIntendedIsTheRunsOwn(t *testing.T) {
	cfg := Default(true)
	t0 := time.Now()
	recs := make(chan record.Request, 8)
	r := &q1Run{cfg: cfg, graph: cfg.deployGraph(2), queries: make([]corpus.Query, 1), questionTokens: []int{24}, txns: make([]q1Txn, 1),
		env: &workload.Env{Start: t0, Log: io.Discard, Sent: func() {}, Record: func(rec record.Request) { recs <- rec }}}
	r.coll = newQ1Collect(r.graph, false, nil, cfg.TopK)
	r.eng = forgetful{r: r}
	r.submit(context.Background(), 0, t0)
	select {
	case tx := <-recs:
		if tx.Kind != "txn" || tx.E2EMs < 0 || tx.E2EMs > 10_000 || tx.LagMs < 0 || tx.LagMs > 10_000 {
			t.Fatalf("txn %+v: want E2E from the run's intended send", tx)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no record")
	}
}

// TestHopsChecked: hops a runtime reports that the graph cannot have
// produced (a --nodes worker is a peer) give no stage records and fail
// the transaction as a payload error, never negative latencies.
func TestHopsChecked(t *testing.T) {
	cfg := Default(true)
	g := cfg.deployGraph(2)
	t0 := time.Now()
	hop := func(j int, enq, end time.Duration) dataflow.Hop {
		return dataflow.Hop{Stage: g.Stages[j].Name, Enqueued: t0.Add(enq), Started: t0.Add(enq), Ended: t0.Add(end)}
	}
	good := []dataflow.Hop{hop(0, 0, time.Millisecond), hop(1, time.Millisecond, 2*time.Millisecond)}
	reversed := []dataflow.Hop{hop(0, time.Millisecond, 0)}
	unknown := []dataflow.Hop{{Stage: "nope", Enqueued: t0, Ended: t0}}
	many := make([]dataflow.Hop, 1000)
	for _, tc := range []struct {
		name string
		hops []dataflow.Hop
		ok   bool
	}{{"the graph's", good, true}, {"ending before enqueued", reversed, false}, {"an unknown stage", unknown, false}, {"more than the stages", many, false}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkHops(g, tc.hops); (err == nil) != tc.ok {
				t.Fatalf("checkHops: %v", err)
			}
		})
	}
	r := &q1Run{cfg: cfg, graph: g, queries: make([]corpus.Query, 1), questionTokens: []int{24}, txns: make([]q1Txn, 1),
		env: &workload.Env{Start: t0, Log: io.Discard}}
	r.coll = newQ1Collect(r.graph, false, nil, cfg.TopK)
	r.txns[0].intended = t0
	recs := r.records(0, dataflow.Record{ID: txnID(0), Hops: reversed}, t0, t0.Add(time.Millisecond))
	if len(recs) != 1 || recs[0].OK || recs[0].ErrorClass != "payload" {
		t.Fatalf("records %+v; want the failed transaction alone", recs)
	}
}
