package dataflow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

// testTimeout bounds every wait in these tests; reaching it is a failure,
// never a timing assertion.
const testTimeout = 20 * time.Second

// newEngine registers ops, deploys g on a Local engine with opts and
// starts Serve. The returned wait function blocks until Serve returns.
func newEngine(t testing.TB, ops map[string]dataflow.OperatorFunc, g dataflow.Graph, opts dataflow.LocalOptions) (*dataflow.Local, func() error) {
	t.Helper()
	reg := dataflow.NewRegistry()
	for name, f := range ops {
		if err := reg.RegisterFunc(name, f); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := dataflow.NewLocal(reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	if err := eng.Deploy(ctx, g); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	return eng, func() error { return <-served }
}

// runAll submits n records (IDs r0000…, payload "x") from one goroutine,
// closes the input, and returns every result by ID; it fails the test on a
// duplicate result or a Serve error.
func runAll(t testing.TB, eng *dataflow.Local, wait func() error, n int) map[string]dataflow.Record {
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

// chain returns a graph of the named stages, stage i using operator ops[i].
func chain(par, queue int, ops ...string) dataflow.Graph {
	g := dataflow.Graph{Name: "test", Parallelism: par, QueueCapacity: queue}
	for i, op := range ops {
		g.Stages = append(g.Stages, dataflow.StageConfig{Name: fmt.Sprintf("s%d", i), Operator: op})
	}
	return g
}

// appendOp emits its input with "|"+tag appended to the payload.
func appendOp(tag string) dataflow.OperatorFunc {
	return func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		out := in
		out.Payload = append(append([]byte(nil), in.Payload...), "|"+tag...)
		return emit(out)
	}
}
