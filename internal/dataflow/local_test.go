package dataflow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
)

// The engine contract (delivery, failures, cancellation, fan-out, hops,
// observer) is tested by the conformance suite in dataflowtest
// (conformance_test.go); this file keeps what is specific to Local.

// TestBackpressureBoundsMemory blocks the last stage and lets a source
// offer 1e6 records of 1 KiB: the engine must accept no more than its
// queues and workers hold, and the heap must not grow with the input.
func TestBackpressureBoundsMemory(t *testing.T) {
	const par, queue, stages = 2, 16, 3
	const bound = stages*queue + stages*par
	block := make(chan struct{})
	sink := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
		return emit(in)
	}
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("noop", noop)
	_ = reg.RegisterFunc("sink", sink)
	eng, err := dataflow.NewLocal(reg, dataflow.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := eng.Deploy(ctx, dataflowtest.Chain(par, queue, "noop", "noop", "sink")); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	before := heapInUse()
	submitted := make(chan error, 1)
	go func() {
		payload := make([]byte, 1024)
		for i := range 1_000_000 {
			if err := eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i), Payload: payload}); err != nil {
				submitted <- err
				return
			}
		}
		submitted <- nil
	}()
	deadline := time.Now().Add(testTimeout)
	for eng.Stats().Submitted < bound && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for range 50 { // keep watching: the count must stay at the bound
		if s := eng.Stats().Submitted; s != bound {
			t.Fatalf("accepted %d records with the sink blocked, want exactly Σqueues+Σworkers = %d", s, bound)
		}
		time.Sleep(time.Millisecond)
	}
	if grew := heapInUse() - before; grew > 16<<20 {
		t.Errorf("heap grew by %d MiB with the sink blocked", grew>>20)
	}
	cancel()
	if err := <-served; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve after cancel: %v, want context.Canceled", err)
	}
	if err := <-submitted; err == nil {
		t.Fatal("Submit kept succeeding after the run was cancelled")
	}
	for range eng.Results() {
	}
	close(block)
}

// TestRedeliveryDedupAtSink turns fault injection on: operators see
// duplicate deliveries, yet every record reaches the sink exactly once.
func TestRedeliveryDedupAtSink(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	redelivered := 0
	counting := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		mu.Lock()
		calls[in.ID]++
		if in.Delivery > 1 {
			redelivered++
		}
		mu.Unlock()
		return emit(in)
	}
	ops := map[string]dataflow.OperatorFunc{"count": counting, "a": dataflowtest.AppendOp("a")}
	eng, wait := newEngine(t, ops, dataflowtest.Chain(2, 8, "a", "count", "a"), dataflow.LocalOptions{Redeliver: 0.3, Seed: 7, Serialize: true})
	const n = 1000
	got := dataflowtest.RunAll(t, eng, wait, n)
	if len(got) != n {
		t.Fatalf("got %d distinct results, want %d", len(got), n)
	}
	total := 0
	for _, c := range calls {
		total += c
	}
	s := eng.Stats()
	if total <= n || redelivered == 0 {
		t.Fatalf("operator saw %d calls (%d redeliveries) for %d records: fault injection did not redeliver", total, redelivered, n)
	}
	if s.Duplicates == 0 || s.Redelivered == 0 || s.Delivered != n || s.InFlight != 0 {
		t.Fatalf("stats %+v: want duplicates dropped, %d delivered", s, n)
	}
}

// TestSerializeIsolatesStages: an operator that reuses its output buffer
// after emitting must not corrupt what the next stage sees when records are
// serialised at stage boundaries.
func TestSerializeIsolatesStages(t *testing.T) {
	scribble := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		out := in
		out.Payload = []byte("good")
		if err := emit(out); err != nil {
			return err
		}
		copy(out.Payload, "BAD!")
		return nil
	}
	eng, wait := newEngine(t, map[string]dataflow.OperatorFunc{"scribble": scribble, "a": dataflowtest.AppendOp("a")}, dataflowtest.Chain(2, 4, "scribble", "a"), dataflow.LocalOptions{Serialize: true})
	for id, r := range dataflowtest.RunAll(t, eng, wait, 100) {
		if string(r.Payload) != "good|a" {
			t.Fatalf("%s: payload %q, want good|a", id, r.Payload)
		}
	}
}

func TestLocalOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dataflow.LocalOptions
		ok   bool
	}{
		{"zero", dataflow.LocalOptions{}, true},
		{"redeliver-1", dataflow.LocalOptions{Redeliver: 1}, true},
		{"redeliver-negative", dataflow.LocalOptions{Redeliver: -0.1}, false},
		{"redeliver-over-1", dataflow.LocalOptions{Redeliver: 1.5}, false},
		{"results-negative", dataflow.LocalOptions{ResultsCapacity: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.opts.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestTimedOutEmitBlockedOnResultsIsDelivered: a last-stage call that
// emitted but is still blocked on a full Results when its stage timeout
// fires is abandoned, and its error record is a duplicate of the output
// in flight. Serve must still wait for that output: draining early would
// close the run with the record delivered neither as output nor as error.
func TestTimedOutEmitBlockedOnResultsIsDelivered(t *testing.T) {
	for _, serialize := range []bool{false, true} {
		t.Run(fmt.Sprintf("serialize=%v", serialize), func(t *testing.T) {
			g := dataflowtest.Chain(1, 4, "emit")
			g.Stages[0].Timeout = 20 * time.Millisecond
			ops := map[string]dataflow.OperatorFunc{"emit": func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
				return emit(in)
			}}
			eng, wait := newEngine(t, ops, g, dataflow.LocalOptions{Serialize: serialize, ResultsCapacity: 1})
			for _, id := range []string{"r0", "r1"} { // r0 fills Results, r1 blocks behind it
				if err := eng.Submit(context.Background(), dataflow.Record{ID: id}); err != nil {
					t.Fatal(err)
				}
			}
			eng.CloseInput()
			deadline := time.Now().Add(testTimeout)
			for eng.Stats().TimedOut == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			served := make(chan error, 1)
			go func() { served <- wait() }()
			select { // give an early drain the chance to happen before reading
			case <-served:
			case <-time.After(100 * time.Millisecond):
			}
			got := map[string]bool{}
			for r := range eng.Results() {
				got[r.ID] = true
			}
			if !got["r0"] || !got["r1"] {
				t.Fatalf("results %v: want r0 and r1 (one record per accepted ID)", got)
			}
		})
	}
}
