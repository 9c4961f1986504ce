package jetstream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// TestOpenRunServesService: a run opened without a graph admits a worker
// offering a Service, which runs with the worker's subject and clock
// offset until Close ends the run (the worker then leaves, Once); a
// worker without a Service is refused, naming --target.
func TestOpenRunServesService(t *testing.T) {
	srv := startServer(t)
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := eng.Deploy(ctx, dataflowtest.Chain(1, 4, "noop")); !errors.Is(err, dataflow.ErrDeployed) {
		t.Errorf("Deploy after Open: %v, want ErrDeployed", err)
	}
	bare, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: eng.Run(),
		Registry: dataflow.NewRegistry(), Name: "bare"})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	var refused *jetstream.RefusedError
	if err := bare.Serve(ctx); !errors.As(err, &refused) || !strings.Contains(err.Error(), "--target") {
		t.Errorf("a worker without a service: %v, want refused naming --target", err)
	}
	runs := make(chan jetstream.ServiceRun, 1)
	svc := func(sctx context.Context, r jetstream.ServiceRun) error {
		runs <- r
		<-sctx.Done()
		return nil
	}
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: eng.Run(),
		Registry: dataflow.NewRegistry(), Name: "loader", Service: svc, Once: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	left := make(chan error, 1)
	go func() { left <- w.Serve(ctx) }()
	if err := eng.WaitWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r := <-runs
	ws := eng.Workers()
	if len(ws) != 1 || ws[0].Service == "" || ws[0].Service != r.Subject || r.Run != eng.Run() || r.Worker != "loader" || r.Clock == nil {
		t.Fatalf("workers %+v, service run %+v", ws, r)
	}
	eng.Close() // ends the run
	select {
	case err := <-left:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the worker did not leave when the run ended")
	}
}
