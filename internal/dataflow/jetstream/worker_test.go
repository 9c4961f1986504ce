package jetstream_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// TestLongOperatorNotRedelivered: an operator working for several ack
// waits is kept alive by InProgress heartbeats: it is called once and its
// record arrives with Delivery 1.
func TestLongOperatorNotRedelivered(t *testing.T) {
	srv := startServer(t)
	var calls atomic.Int32
	long := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		calls.Add(1)
		select {
		case <-time.After(1200 * time.Millisecond): // four ack waits
		case <-ctx.Done():
			return ctx.Err()
		}
		return emit(in)
	}
	reg := dataflowtest.Registry(t, map[string]dataflow.OperatorFunc{"long": long})
	eng := newEngine(t, srv, jetstream.Config{Registry: reg, AckWait: 300 * time.Millisecond})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(2, 4, "long")); err != nil {
		t.Fatal(err)
	}
	got := drive(t, eng, []string{"a"}, func(int) {})
	if r := got["a"]; r.Err != nil || len(r.Hops) != 1 {
		t.Fatalf("result %+v", r)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("operator called %d times, want 1 (heartbeats must prevent redelivery)", n)
	}
	if s := eng.Stats(); s.Redelivered != 0 || s.Duplicates != 0 {
		t.Fatalf("stats %+v, want no redelivery", s)
	}
}

// TestWorkerDrainsOnCancel: cancelling a worker's context (SIGTERM) stops
// it pulling, lets the record in service finish and be acked, and Serve
// returns nil; the record is not redelivered.
func TestWorkerDrainsOnCancel(t *testing.T) {
	srv := startServer(t)
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	op := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return emit(in)
	}
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true, AckWait: 5 * time.Second})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(1, 4, "op")); err != nil {
		t.Fatal(err)
	}
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: eng.Run(),
		Registry: dataflowtest.Registry(t, map[string]dataflow.OperatorFunc{"op": op})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wctx, stop := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() { left <- w.Serve(wctx) }()
	results := make(chan map[string]dataflow.Record, 1)
	go func() { results <- drive(t, eng, []string{"a"}, func(int) {}) }()
	<-started
	stop() // SIGTERM while "a" is in service
	close(release)
	if err := <-left; err != nil {
		t.Fatalf("worker Serve after cancel: %v, want nil", err)
	}
	got := <-results
	if r, ok := got["a"]; !ok || r.Err != nil {
		t.Fatalf("results %+v, want a", got)
	}
	if n := calls.Load(); n != 1 || w.Processed() != 1 {
		t.Fatalf("operator called %d times, worker acked %d, want 1 and 1", n, w.Processed())
	}
}

// TestWorkerDiscoversRunAndClock: a worker started without a run ID finds
// the run, and the coordinator learns its clock offset: here the worker's
// clock runs an hour ahead.
func TestWorkerDiscoversRunAndClock(t *testing.T) {
	srv := startServer(t)
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(1, 4, "noop")); err != nil {
		t.Fatal(err)
	}
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Once: true, Now: ahead,
		Registry: dataflowtest.Registry(t, map[string]dataflow.OperatorFunc{"noop": dataflowtest.Noop})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	left := make(chan error, 1)
	go func() { left <- w.Serve(context.Background()) }()
	if got := drive(t, eng, []string{"a", "b"}, func(int) {}); len(got) != 2 {
		t.Fatalf("got %d results, want 2", len(got))
	}
	if err := <-left; err != nil {
		t.Fatal(err)
	}
	ws := eng.Workers()
	if len(ws) != 1 || ws[0].Clock == nil {
		t.Fatalf("workers %+v, want one with a clock offset", ws)
	}
	c := ws[0].Clock
	if d := c.Offset - time.Hour; d < -c.Uncertainty-time.Millisecond || d > c.Uncertainty+time.Millisecond || c.Samples == 0 {
		t.Fatalf("clock %+v, want 1h ± %s", c, c.Uncertainty)
	}
}

// TestWorkerOnASealedRun: a run whose graph is sealed with its key is
// served end to end by a worker holding the join token (its outputs
// verify at the sink: nothing rejected); a worker without a token, or with
// another one, leaves at join with an error naming the token, before it
// touches a stream.
func TestWorkerOnASealedRun(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	srv := startServer(t)
	eng := newEngine(t, srv, jetstream.Config{RemoteOnly: true, AckWait: 5 * time.Second, Run: "sealedrun",
		Key: jetstream.RunKey(token, "sealedrun")})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(2, 4, "op")); err != nil {
		t.Fatal(err)
	}
	same := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error { return emit(in) }
	worker := func(tok string) *jetstream.Worker {
		w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: eng.Run(), Once: true,
			JoinToken: tok, Registry: dataflowtest.Registry(t, map[string]dataflow.OperatorFunc{"op": same})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		return w
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct{ name, token, want string }{
		{"no token", "", "no join token"},
		{"another token", "fedcba9876543210fedcba9876543210", "not the run's"},
	} {
		if err := worker(tc.token).Serve(ctx); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Serve = %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	if ws := eng.Workers(); len(ws) != 0 {
		t.Errorf("workers without the run's token joined the roster: %+v", ws)
	}
	w := worker(token)
	go func() { _ = w.Serve(ctx) }()
	got := drive(t, eng, []string{"a", "b", "c"}, func(int) {})
	if len(got) != 3 || w.Processed() == 0 {
		t.Errorf("results %v, worker processed %d; want a, b and c served by the worker", got, w.Processed())
	}
	if s := eng.Stats(); s.Rejected != 0 {
		t.Errorf("rejected %d of the token holder's messages", s.Rejected)
	}
}
