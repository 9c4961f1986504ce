package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// TestOpenRunServesService: a run opened without a graph admits a worker
// offering a Service, which runs with the worker's subject and clock
// offset until Close ends the run (the worker then leaves, Once); a
// worker without a Service is refused, naming --target, and the
// coordinator logs the refusal. Workers started with the run's ID and
// workers discovering it (no --run, as on another host) alike.
func TestOpenRunServesService(t *testing.T) {
	for _, discover := range []bool{false, true} {
		t.Run(map[bool]string{false: "with the run ID", true: "discovering the run"}[discover], func(t *testing.T) {
			testOpenRunServesService(t, discover)
		})
	}
}

func testOpenRunServesService(t *testing.T, discover bool) {
	srv := startServer(t)
	var logs syncLines
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true, Logf: logs.add})
	run := eng.Run()
	if discover {
		run = ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := eng.Deploy(ctx, dataflowtest.Chain(1, 4, "noop")); !errors.Is(err, dataflow.ErrDeployed) {
		t.Errorf("Deploy after Open: %v, want ErrDeployed", err)
	}
	bare, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: run,
		Registry: dataflow.NewRegistry(), Name: "bare"})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	var refused *jetstream.RefusedError
	if err := bare.Serve(ctx); !errors.As(err, &refused) || !strings.Contains(err.Error(), "--target") {
		t.Errorf("a worker without a service: %v, want refused naming --target", err)
	}
	if !strings.Contains(logs.String(), `refused worker "bare": worker "bare" serves no load shards`) {
		t.Errorf("the coordinator did not log the refusal: %q", logs.String())
	}
	runs := make(chan jetstream.ServiceRun, 1)
	svc := func(sctx context.Context, r jetstream.ServiceRun) error {
		runs <- r
		<-sctx.Done()
		return nil
	}
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: run,
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

// syncLines collects log lines from several goroutines.
type syncLines struct {
	mu    sync.Mutex
	lines []string
}

func (s *syncLines) add(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, fmt.Sprintf(format, args...))
}

func (s *syncLines) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}
