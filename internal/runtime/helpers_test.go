package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/runtime"
)

// testTimeout bounds every wait in these tests; reaching it is a failure,
// never a timing assertion.
const testTimeout = 20 * time.Second

// newEngine registers ops, deploys g on a Local engine with opts and
// starts Serve. The returned wait function blocks until Serve returns.
func newEngine(t testing.TB, ops map[string]runtime.OperatorFunc, g runtime.Graph, opts runtime.LocalOptions) (*runtime.Local, func() error) {
	t.Helper()
	reg := runtime.NewRegistry()
	for name, f := range ops {
		if err := reg.RegisterFunc(name, f); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := runtime.NewLocal(reg, opts)
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
func runAll(t testing.TB, eng *runtime.Local, wait func() error, n int) map[string]runtime.Record {
	t.Helper()
	go func() {
		for i := range n {
			id := fmt.Sprintf("r%04d", i)
			r := runtime.Record{ID: id, Payload: []byte("x"), Meta: runtime.Metadata{Trace: "t-" + id, Tenant: "ten"}}
			if err := eng.Submit(context.Background(), r); err != nil {
				t.Errorf("submit %s: %v", id, err)
				break
			}
		}
		eng.CloseInput()
	}()
	got := map[string]runtime.Record{}
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
func chain(par, queue int, ops ...string) runtime.Graph {
	g := runtime.Graph{Name: "test", Parallelism: par, QueueCapacity: queue}
	for i, op := range ops {
		g.Stages = append(g.Stages, runtime.StageConfig{Name: fmt.Sprintf("s%d", i), Operator: op})
	}
	return g
}

// appendOp emits its input with "|"+tag appended to the payload.
func appendOp(tag string) runtime.OperatorFunc {
	return func(_ context.Context, in runtime.Record, emit func(runtime.Record) error) error {
		out := in
		out.Payload = append(append([]byte(nil), in.Payload...), "|"+tag...)
		return emit(out)
	}
}
