package jetstream_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream/jstest"
)

// The test binary doubles as a worker process: with these variables set,
// TestMain serves runs instead of running tests (and as a NATS server
// process, see jstest).
const (
	envWorkerURL = "SAGEBENCH_JOIN_URL" // set by SpawnWorkers
	envWorkerRun = "SAGEBENCH_JOIN_RUN"
)

func TestMain(m *testing.M) {
	jstest.MaybeServe()
	if url := os.Getenv(envWorkerURL); url != "" {
		os.Exit(workerMain(url, os.Getenv(envWorkerRun)))
	}
	os.Exit(m.Run())
}

// faultOps are the operators of the fault tests: noop, slow (1 ms) and
// crash, which kills its process on the record "poison".
func faultOps() map[string]dataflow.OperatorFunc {
	return map[string]dataflow.OperatorFunc{
		"noop": dataflowtest.Noop,
		"slow": func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
			time.Sleep(time.Millisecond)
			return emit(in)
		},
		"crash": func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
			if in.ID == "poison" {
				os.Exit(3) // a worker dies on this record, every time
			}
			return emit(in)
		},
	}
}

func workerMain(url, run string) int {
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{
		Conn: jetstream.ConnConfig{URL: url, Auth: jetstream.Auth{User: os.Getenv("NATS_USER"), Password: os.Getenv("NATS_PASSWORD")}},
		Run:  run, Registry: dataflowtest.Registry(&testing.T{}, faultOps()), Once: true,
		Name: os.Getenv("SAGEBENCH_WORKER_NAME"), JoinToken: os.Getenv("SAGEBENCH_JOIN_TOKEN"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Close()
	if err := w.Serve(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// spawn starts n worker processes (this test binary) for eng's run and
// waits until they joined.
func spawn(t *testing.T, srv *jetstream.Server, eng *jetstream.Engine, n int) *jetstream.Procs {
	t.Helper()
	procs, err := jetstream.SpawnWorkers(jetstream.SpawnConfig{
		N: n, URL: srv.URL(), Run: eng.Run(), Exe: os.Args[0], Args: []string{"-test.run=^$"}, Stderr: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = procs.Stop(10 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
	defer cancel()
	if err := eng.WaitWorkers(ctx, n); err != nil {
		t.Fatal(err)
	}
	return procs
}

// drive submits ids, reads every result, and calls onResult after each.
func drive(t *testing.T, eng *jetstream.Engine, ids []string, onResult func(n int)) map[string]dataflow.Record {
	t.Helper()
	return driveWithin(t, dataflowtest.Timeout, eng, ids, onResult)
}

// driveWithin is drive with its own bound on the whole run.
func driveWithin(t *testing.T, limit time.Duration, eng *jetstream.Engine, ids []string, onResult func(n int)) map[string]dataflow.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	go func() {
		for _, id := range ids {
			if err := eng.Submit(ctx, dataflow.Record{ID: id, Payload: []byte(id)}); err != nil {
				t.Errorf("submit %s: %v", id, err)
				break
			}
		}
		eng.CloseInput()
	}()
	got := map[string]dataflow.Record{}
	for r := range eng.Results() {
		if _, dup := got[r.ID]; dup {
			t.Errorf("%s delivered twice", r.ID)
		}
		got[r.ID] = r
		onResult(len(got))
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return got
}

// TestWorkerKilledMidRun SIGKILLs one of two worker processes while the
// run is under way: its unacked records are redelivered to the other one
// and every record arrives exactly once.
func TestWorkerKilledMidRun(t *testing.T) {
	srv := startServer(t)
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true, AckWait: time.Second})
	g := dataflowtest.Chain(2, 64, "noop", "slow", "noop")
	if err := eng.Deploy(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	procs := spawn(t, srv, eng, 2)
	const n = 400
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%04d", i)
	}
	var killed atomic.Bool
	got := drive(t, eng, ids, func(done int) {
		if done == n/4 && killed.CompareAndSwap(false, true) {
			if err := procs.Kill(0); err != nil {
				t.Errorf("kill: %v", err)
			}
		}
	})
	if !killed.Load() {
		t.Fatal("the worker was never killed")
	}
	if lost := n - len(got); lost != 0 {
		t.Fatalf("lost %d records", lost)
	}
	for id, r := range got {
		if r.Err != nil || string(r.Payload) != id {
			t.Fatalf("%s: %+v, want its payload back and no error", id, r)
		}
	}
	s := eng.Stats()
	t.Logf("after the kill: delivered %d, duplicates dropped at the sink %d, redelivered %d, workers %d", s.Delivered, s.Duplicates, s.Redelivered, s.Workers)
	if s.Delivered != n || s.InFlight != 0 {
		t.Fatalf("stats %+v", s)
	}
	// every worker is remote: only the server's consumer state knows the
	// killed worker's records went out again
	if s.Redelivered == 0 {
		t.Errorf("redelivered 0 after a worker holding unacked records was killed; the server's count was not read")
	}
}

// TestPoisonRecordIsDeadLettered: a record that kills every worker it is
// delivered to is given up after MaxDeliver deliveries, delivered as a
// dead-letter error record and counted; the other records go through.
func TestPoisonRecordIsDeadLettered(t *testing.T) {
	srv := startServer(t)
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true, AckWait: 500 * time.Millisecond, MaxDeliver: 2, Prefetch: 1})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(1, 16, "noop", "crash")); err != nil {
		t.Fatal(err)
	}
	spawn(t, srv, eng, 3) // two die on the poison, the third dead-letters it
	ids := []string{"poison"}
	for i := range 20 {
		ids = append(ids, fmt.Sprintf("r%02d", i))
	}
	got := drive(t, eng, ids, func(int) {})
	if len(got) != len(ids) {
		t.Fatalf("got %d results, want %d; stats %+v", len(got), len(ids), eng.Stats())
	}
	p := got["poison"]
	if p.Err == nil || p.Err.Kind != dataflow.KindDeadLetter || p.Err.Stage != "s1" {
		t.Fatalf("poison result %+v, want a dead_letter error at s1", p.Err)
	}
	dead := 0
	for id, r := range got {
		switch {
		case r.Err != nil && r.Err.Kind == dataflow.KindDeadLetter:
			dead++ // an innocent record buffered by two dying workers may join the poison
		case r.Err != nil || string(r.Payload) != id:
			t.Fatalf("%s: %+v, want its payload back", id, r)
		}
	}
	if s := eng.Stats(); s.DeadLettered != int64(dead) || s.Errors != int64(dead) {
		t.Fatalf("stats %+v, want %d dead letters counted as errors", s, dead)
	}
}
