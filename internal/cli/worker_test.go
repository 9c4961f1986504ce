package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

func startNATS(t *testing.T) *jetstream.Server {
	t.Helper()
	srv, err := jetstream.StartEmbedded(context.Background(), jetstream.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// coordinator deploys a no-op graph on srv as a RemoteOnly engine of the
// given version.
func coordinator(t *testing.T, srv *jetstream.Server, version string, g dataflow.Graph) *jetstream.Engine {
	t.Helper()
	eng, err := jetstream.New(jetstream.Config{Conn: jetstream.ConnConfig{URL: srv.URL()}, RemoteOnly: true, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	if err := eng.Deploy(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return eng
}

func TestWorkerBadInput(t *testing.T) {
	srv := startNATS(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want []string
	}{
		{"no-url", nil, nil, ExitUsage, []string{"--nats-url: required"}},
		{"unreachable", nil, []string{"--nats-insecure", "--nats-url", "nats://127.0.0.1:1"}, ExitError, []string{"nats://127.0.0.1:1"}},
		{"anonymous", nil, []string{"--nats-url", "nats://127.0.0.1:1"}, ExitUsage, []string{"without credentials", "--nats-insecure"}},
		{"token-file-open", nil, []string{"--nats-insecure", "--nats-url", srv.URL(), "--join-token-file", "/nonexistent"}, ExitUsage, []string{"--join-token-file"}},
		{"unreachable-redacted", nil, []string{"--nats-url", "nats://alice:s3cret@127.0.0.1:1"}, ExitError, []string{"nats://127.0.0.1:1"}},
		{"http-scheme", nil, []string{"--nats-url", "http://127.0.0.1:4222"}, ExitUsage, []string{`--nats-url "http://127.0.0.1:4222": want nats://host:port`}},
		{"bad-scheme-redacted", nil, []string{"--nats-url", "htp://alice:s3cret@127.0.0.1:4222"}, ExitUsage, []string{`"htp://127.0.0.1:4222": want nats://`}},
		{"bare-host", nil, []string{"--nats-url", "127.0.0.1:4222"}, ExitUsage, []string{"want nats://host:port"}},
		{"one-bad-of-a-list", nil, []string{"--nats-url", "nats://127.0.0.1:1,http://127.0.0.1:2"}, ExitUsage, []string{`"http://127.0.0.1:2"`}},
		{"missing-creds-file", nil, []string{"--nats-url", srv.URL(), "--nats-creds", "/nonexistent.creds"}, ExitUsage, []string{"--nats-creds /nonexistent.creds"}},
		{"bad-target", nil, []string{"--nats-insecure", "--nats-url", srv.URL(), "--target", "ftp://x"}, ExitUsage, []string{"--target"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envNATSURL, "")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code, _, stderr := runCLI(t, ctx, append([]string{"worker"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "s3cret") {
				t.Errorf("stderr leaks the password: %q", stderr)
			}
		})
	}
}

// TestWorkerServesRun: a worker joins a coordinator's run, serves it and
// leaves (--once) when the run ends.
func TestWorkerServesRun(t *testing.T) {
	srv := startNATS(t)
	eng := coordinator(t, srv, workerVersion(), dataflowtest.Chain(2, 16, "noop", "noop"))
	ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
	defer cancel()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runCLI(t, ctx, "worker", "--nats-insecure", "--nats-url", srv.URL(), "--run", eng.Run(), "--once", "--name", "w1")
		done <- result{code, out, errOut}
	}()
	if err := eng.WaitWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := serveAll(t, ctx, eng, 100)
	if got != 100 {
		t.Fatalf("got %d results, want 100", got)
	}
	r := <-done
	if r.code != ExitOK || !strings.Contains(r.stderr, "joined run "+eng.Run()) {
		t.Fatalf("worker exit %d, stderr %s", r.code, r.stderr)
	}
	if w := eng.Workers(); len(w) != 1 || w[0].Name != "w1" {
		t.Fatalf("workers %+v, want w1", w)
	}
	// A worker named for the run after it ended has nothing to do.
	code, _, stderr := runCLI(t, ctx, "worker", "--nats-insecure", "--nats-url", srv.URL(), "--run", eng.Run())
	if code != ExitOK || !strings.Contains(stderr, "run "+eng.Run()+" is over") {
		t.Fatalf("late worker: exit %d, stderr %s", code, stderr)
	}
}

func serveAll(t *testing.T, ctx context.Context, eng *jetstream.Engine, n int) int {
	t.Helper()
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	go func() {
		for i := range n {
			if err := eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i)}); err != nil {
				t.Error(err)
				return
			}
		}
		eng.CloseInput()
	}()
	got := 0
	for range eng.Results() {
		got++
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWorkerRefusedAtJoin: a coordinator of another version, or one
// whose graph needs operators the worker lacks, refuses it, naming both.
func TestWorkerRefusedAtJoin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string
		graph   dataflow.Graph
		args    []string
		want    []string
	}{
		{"version", "v9.9.9+abc", dataflowtest.Chain(1, 4, "noop"), nil, []string{"v9.9.9+abc", workerVersion()}},
		{"operators", workerVersion(), dataflowtest.Chain(1, 4, "noop", "embed"), nil, []string{"lacks operators embed", "noop"}},
		{"graph", workerVersion(), dataflowtest.Chain(1, 4, "noop"), []string{"--graph", "q1"}, []string{`graph "q1"`, `graph "test"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startNATS(t)
			eng := coordinator(t, srv, tc.version, tc.graph)
			ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
			defer cancel()
			args := append([]string{"worker", "--nats-insecure", "--nats-url", srv.URL(), "--run", eng.Run()}, tc.args...)
			code, _, stderr := runCLI(t, ctx, args...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d; stderr %s", code, ExitError, stderr)
			}
			for _, w := range append(tc.want, "refused") {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if n := len(eng.Workers()); n != 0 {
				t.Errorf("%d workers joined, want 0", n)
			}
		})
	}
}

// TestWorkerCleanRemovesStaleStreams: streams of a run whose coordinator
// is gone are listed by Deploy's refusal and deleted by worker --clean.
func TestWorkerCleanRemovesStaleStreams(t *testing.T) {
	srv := startNATS(t)
	nc, err := jetstream.Connect(jetstream.ConnConfig{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := natsjs.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
	defer cancel()
	if _, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: jetstream.StreamPrefix + "crashed_S0", Subjects: []string{"sagebench.crashed.s.0"}}); err != nil {
		t.Fatal(err)
	}
	eng, err := jetstream.New(jetstream.Config{NC: nc, RemoteOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = eng.Deploy(ctx, dataflowtest.Chain(1, 4, "noop"))
	if err == nil || !strings.Contains(err.Error(), "SAGEBENCH_crashed_S0") || !strings.Contains(err.Error(), "sagebench worker --nats-url "+srv.URL()+" --clean") {
		t.Fatalf("Deploy with a stale stream: %v, want a refusal naming it and the clean command", err)
	}
	code, stdout, stderr := runCLI(t, ctx, "worker", "--nats-insecure", "--nats-url", srv.URL(), "--clean")
	if code != ExitOK || !strings.Contains(stdout, "deleted stream SAGEBENCH_crashed_S0") {
		t.Fatalf("clean: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if err := eng.Deploy(ctx, dataflowtest.Chain(1, 4, "noop")); err != nil {
		t.Fatalf("Deploy after --clean: %v", err)
	}
}

// TestClusterSpawnsWorkerProcesses runs the --nodes N path end to end:
// an embedded server, two real `sagebench worker` processes (this test
// binary acting as sagebench, see TestMain), one run, then SIGTERM.
func TestClusterSpawnsWorkerProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
	defer cancel()
	var stderr syncBuffer
	c, err := jetstream.StartCluster(ctx, jetstream.ClusterConfig{
		Nodes:  2,
		Engine: jetstream.Config{Version: workerVersion()},
		Spawn:  jetstream.SpawnConfig{Exe: os.Args[0], Env: []string{envTestAsCLI + "=1"}, Stderr: &stderr},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Deploy(ctx, dataflowtest.Chain(2, 16, "noop", "noop")); err != nil {
		t.Fatalf("%v\nworker stderr:\n%s", err, stderr.String())
	}
	if got := serveAll(t, ctx, c.Engine(), 200); got != 200 {
		t.Fatalf("got %d results, want 200", got)
	}
	info := c.Info()
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v\nworker stderr:\n%s", err, stderr.String())
	}
	if info.Workers != 2 || len(info.Nodes) != 2 || info.Nodes[0].Clock == nil {
		t.Fatalf("info %+v", info)
	}
	for _, want := range []string{"worker-0", "worker-1", "joined run " + info.Run, "left run " + info.Run} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("worker stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
