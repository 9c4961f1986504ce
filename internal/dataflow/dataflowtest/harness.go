// Package dataflowtest is the conformance suite of dataflow.Engine: the
// same tests run against the in-process engine and the JetStream engine,
// so that both honour one contract (every record delivered once, error
// records in place of outputs, bounded acceptance under backpressure,
// cancellation, fan-out and filtering, hop times, the observer).
//
// An engine package calls Run from its own test with a Harness that builds
// a fresh engine per case.
package dataflowtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

// Timeout bounds every wait in the suite; reaching it is a failure, never
// a timing assertion.
const Timeout = 30 * time.Second

// Harness builds engines for the suite.
type Harness struct {
	// New returns a fresh, undeployed engine that builds operators from
	// reg and reports to obs (nil: no observer), and a function reading
	// its counters.
	New func(t testing.TB, reg *dataflow.Registry, obs dataflow.Observer) (dataflow.Engine, func() dataflow.Stats)
	// Bound is the most records the engine may accept for g while the
	// last stage is blocked.
	Bound func(g dataflow.Graph) int
}

// Run runs every conformance test against h's engines.
func Run(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, Harness)
	}{
		{"DeliversEveryRecordOnce", testDeliversEveryRecordOnce},
		{"ParallelismBoundsConcurrency", testParallelismBoundsConcurrency},
		{"StageFailureBecomesErrorRecord", testStageFailureBecomesErrorRecord},
		{"BackpressureBoundsAcceptance", testBackpressureBoundsAcceptance},
		{"UnknownOperatorFailsDeploy", testUnknownOperatorFailsDeploy},
		{"CancelStopsRun", testCancelStopsRun},
		{"FanOutFilterAndLateEmit", testFanOutFilterAndLateEmit},
		{"ObserverSeesEveryStage", testObserverSeesEveryStage},
		{"SubmitRejects", testSubmitRejects},
		{"HopsSeparateQueueingFromService", testHopsSeparateQueueingFromService},
		{"DuplicateIDsDroppedAndCounted", testDuplicateIDsDroppedAndCounted},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, h) })
	}
}

// Registry returns a registry holding ops.
func Registry(t testing.TB, ops map[string]dataflow.OperatorFunc) *dataflow.Registry {
	t.Helper()
	reg := dataflow.NewRegistry()
	for name, f := range ops {
		if err := reg.RegisterFunc(name, f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// Start builds an engine with ops, deploys g and starts Serve; wait
// blocks until Serve returns.
func Start(t testing.TB, h Harness, ops map[string]dataflow.OperatorFunc, g dataflow.Graph, obs dataflow.Observer) (eng dataflow.Engine, stats func() dataflow.Stats, wait func() error) {
	t.Helper()
	eng, stats = h.New(t, Registry(t, ops), obs)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	if err := eng.Deploy(ctx, g); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	return eng, stats, func() error { return <-served }
}

// RunAll submits n records (IDs r0000…, payload "x", trace "t-<ID>",
// tenant "ten") from one goroutine, closes the input and returns every
// result by ID; it fails the test on a duplicate result or a Serve error.
func RunAll(t testing.TB, eng dataflow.Engine, wait func() error, n int) map[string]dataflow.Record {
	t.Helper()
	go func() {
		for i := range n {
			id := fmt.Sprintf("r%04d", i)
			r := dataflow.Record{ID: id, Payload: []byte("x"), Meta: dataflow.Metadata{Trace: "t-" + id, Tenant: "ten"}}
			if err := eng.Submit(context.Background(), r); err != nil {
				t.Errorf("submit %s: %v", id, err)
				break
			}
		}
		eng.CloseInput()
	}()
	got := map[string]dataflow.Record{}
	for r := range eng.Results() {
		if _, dup := got[r.ID]; dup {
			t.Errorf("record %s delivered twice", r.ID)
		}
		got[r.ID] = r
	}
	if err := wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return got
}

// Chain returns a graph of stages s0, s1, … where stage i runs ops[i].
func Chain(par, queue int, ops ...string) dataflow.Graph {
	g := dataflow.Graph{Name: "test", Parallelism: par, QueueCapacity: queue}
	for i, op := range ops {
		g.Stages = append(g.Stages, dataflow.StageConfig{Name: fmt.Sprintf("s%d", i), Operator: op})
	}
	return g
}

// AppendOp emits its input with "|"+tag appended to the payload.
func AppendOp(tag string) dataflow.OperatorFunc {
	return func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		out := in
		out.Payload = append(append([]byte(nil), in.Payload...), "|"+tag...)
		return emit(out)
	}
}

// Noop emits its input unchanged.
func Noop(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
	return emit(in)
}

// CheckHops asserts r visited stages in order with ordered, complete times.
func CheckHops(t testing.TB, r dataflow.Record, stages ...string) {
	t.Helper()
	if len(r.Hops) != len(stages) {
		t.Fatalf("%s: %d hops, want %d: %+v", r.ID, len(r.Hops), len(stages), r.Hops)
	}
	for i, h := range r.Hops {
		if h.Stage != stages[i] {
			t.Fatalf("%s: hop %d at stage %q, want %q", r.ID, i, h.Stage, stages[i])
		}
		if h.Enqueued.IsZero() || h.Started.Before(h.Enqueued) || h.Ended.Before(h.Started) {
			t.Fatalf("%s: hop %d times out of order: %+v", r.ID, i, h)
		}
		if i > 0 && h.Enqueued.Before(r.Hops[i-1].Ended) {
			t.Fatalf("%s: hop %d enqueued before hop %d ended", r.ID, i, i-1)
		}
	}
}
