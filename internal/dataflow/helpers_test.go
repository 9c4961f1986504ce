package dataflow_test

import (
	"context"
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
