package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream/jstest"
	"github.com/sagebench/sagebench/internal/fleet"
)

// handWorker starts `sagebench worker` as its own process (this test
// binary acting as the sagebench binary), the way an operator starts one
// on another host: only the NATS URL, the target and a name, no run ID.
func handWorker(t *testing.T, natsURL, name string, extra ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	var stderr syncBuffer
	cmd := exec.Command(os.Args[0], append([]string{"worker", "--nats-url", natsURL, "--name", name, "--progress", "0"}, extra...)...)
	cmd.Env = append(os.Environ(), envTestAsCLI+"=1")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, &stderr
}

// tokenFile writes a join token (mode 600) under dir and returns its path.
func tokenFile(t *testing.T, dir string) string {
	t.Helper()
	tok, err := jetstream.NewJoinToken()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "join-token")
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunQ4OnAuthenticatedServer: an outside NATS server that requires
// a user and password; a worker started by hand with those credentials
// (NATS_USER/NATS_PASSWORD) and the join token file joins, and the run
// completes with its records. Without credentials the run is refused
// before anything starts, naming --nats-insecure; a worker without the
// join token joins but its shards are refused.
func TestRunQ4OnAuthenticatedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server and worker processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := jetstream.StartEmbedded(ctx, jetstream.ServerConfig{User: "ops", Password: "outside-pw-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	stack, stop := startServe(t, "serve", "--listen", "127.0.0.1:0")
	defer stop()
	dir := t.TempDir()
	tok := tokenFile(t, dir)
	cfg := writeConfig(t, dir, "validity: {max_lag_p99_ms: 1000, min_delivered_ratio: 0.5}\n"+
		"q4: {scales: [1], probe: 500ms, max_probe: 500ms, service_multiple: 0, max_probes: 2, max_driver_lag: 60s, start_rate: 8}\n")
	code, _, stderr := runCLI(t, ctx, "run", "-e", "Q4", "--quick", "--nodes", "1", "--nats-url", srv.URL(),
		"--target", stack, "-c", cfg, "--output-dir", filepath.Join(dir, "refused"))
	if code == ExitOK || !strings.Contains(stderr, "--nats-insecure") {
		t.Fatalf("no credentials: exit %d, stderr %s; want a refusal naming --nats-insecure", code, stderr)
	}
	t.Setenv(envNATSUser, "ops")
	t.Setenv(envNATSPassword, "outside-pw-0123456789")
	_, werr := handWorker(t, srv.URL(), "w1", "--target", stack, "--join-token-file", tok)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, ctx, "run", "-e", "Q4", "--quick", "--nodes", "1", "--nats-url", srv.URL(),
		"--join-token-file", tok, "--target", stack, "-c", cfg, "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s\nworker: %s", code, stderr, stdout, werr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "q4", "q4-sage-0-*"))
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	run := readRun(t, dirs[0])
	n := 0
	for _, r := range readRequests(t, dirs[0]) {
		if r.Node != "w1" {
			t.Fatalf("a record from %q", r.Node)
		}
		n++
	}
	if !run.Complete || !run.Valid || n == 0 || run.Integrity != nil || !strings.Contains(strings.Join(run.Notes, "\n"), "NATS authenticated") {
		t.Errorf("complete %v valid %v, %d records, integrity %+v, notes %v", run.Complete, run.Valid, n, run.Integrity, run.Notes)
	}
}

// requestLines counts the lines of the requests.jsonl files under dir.
func requestLines(dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "q4", "*", "requests.jsonl"))
	n := 0
	for _, f := range files {
		if fh, err := os.Open(f); err == nil {
			sc := bufio.NewScanner(fh)
			for sc.Scan() {
				n++
			}
			fh.Close()
		}
	}
	return n
}

// TestRunQ4OnOutsideCluster: a 3-server NATS cluster, each server its own
// process; two `sagebench worker --nats-url … --target …` processes
// started by hand, without --run, each on another server than the
// coordinator's, and a third without --target. `run -e Q4 --nats-url`
// prints its run ID and how to join, logs the refusal of the worker
// without a target, and completes with the load sent by the two. A second
// run (the same workers join it: they serve run after run) has one worker
// SIGKILLed mid-phase: exit 1, the node named on stderr and in run.json,
// "complete": false, and each request it never reported a failed
// node_lost record.
func TestRunQ4OnOutsideCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-process NATS cluster and worker processes")
	}
	_, urls := jstest.StartCluster3(t)
	servers := strings.Split(urls, ",")
	stack, stop := startServe(t, "serve", "--listen", "127.0.0.1:0")
	defer stop()
	dir := t.TempDir()
	tok := tokenFile(t, dir)
	// (these servers take anyone: --nats-insecure on both sides; the join
	// token still seals the records)
	_, w1err := handWorker(t, servers[1], "w1", "--target", stack, "--nats-insecure", "--join-token-file", tok)
	w2, w2err := handWorker(t, servers[2], "w2", "--target", stack, "--nats-insecure", "--join-token-file", tok)
	_, bareErr := handWorker(t, servers[2], "bare", "--nats-insecure", "--join-token-file", tok)
	cfg := writeConfig(t, dir, "validity: {max_lag_p99_ms: 1000, min_delivered_ratio: 0.5}\n"+
		"q4: {scales: [1, 2], probe: 500ms, max_probe: 500ms, service_multiple: 0, max_probes: 2, max_driver_lag: 60s, start_rate: 8}\n")
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, stdout, stderr := runCLI(t, ctx, "run", "-e", "Q4", "--quick", "--nodes", "2", "--nats-url", servers[0],
		"--nats-insecure", "--join-token-file", tok, "--target", stack, "-c", cfg, "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s\nw2: %s\nbare: %s", code, stderr, stdout, w2err.String(), bareErr.String())
	}
	for _, want := range []string{"waiting up to 30s for 2 worker(s) on " + servers[0], "sagebench worker --nats-url " + servers[0] + " --target URL",
		`refused worker "bare": worker "bare" serves no load shards`, `worker "w1"`, `worker "w2"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "q4", "q4-sage-0-*"))
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	nodes := map[string]int{}
	for _, r := range readRequests(t, dirs[0]) {
		nodes[r.Node]++
	}
	if run := readRun(t, dirs[0]); !run.Complete || nodes["w1"] == 0 || nodes["w2"] == 0 || len(nodes) != 2 {
		t.Fatalf("complete %v, records per node %v; want both hand-started workers", run.Complete, nodes)
	} else if !strings.Contains(string(run.RunConfig), `"nats_insecure": true`) || !strings.Contains(strings.Join(run.Notes, "\n"), "--nats-insecure") {
		t.Errorf("run.json does not record --nats-insecure: %s\n%v", run.RunConfig, run.Notes)
	}

	// The second run: w2 is killed once records flow.
	out2 := filepath.Join(dir, "out2")
	cfg2 := writeConfig(t, dir, "validity: {max_lag_p99_ms: 1000, min_delivered_ratio: 0.5}\n"+
		"q4: {scales: [1, 2], probe: 4s, max_probe: 4s, service_multiple: 0, max_probes: 2, max_driver_lag: 60s, start_rate: 20}\n")
	go func() {
		for ctx.Err() == nil && requestLines(out2) < 10 {
			time.Sleep(50 * time.Millisecond)
		}
		_ = w2.Process.Kill()
	}()
	code, stdout, stderr = runCLI(t, ctx, "run", "-e", "Q4", "--quick", "--nodes", "2", "--nats-url", servers[0],
		"--nats-insecure", "--join-token-file", tok, "--target", stack, "-c", cfg2, "--output-dir", out2)
	if code != ExitError || !strings.Contains(stderr, "load node w2 stopped answering") || !strings.Contains(stderr, `"complete": false`) {
		t.Fatalf("a node killed mid-phase: exit %d, want 1 naming w2\nstderr: %s\nstdout: %s\nw1: %s\nw2: %s", code, stderr, stdout, w1err.String(), w2err.String())
	}
	dirs, _ = filepath.Glob(filepath.Join(out2, "q4", "q4-sage-0-*"))
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	run := readRun(t, dirs[0])
	lost := 0
	for _, r := range readRequests(t, dirs[0]) {
		if r.ErrorClass == fleet.ClassNodeLost {
			if r.Node != "w2" || r.OK {
				t.Errorf("lost record %+v", r)
			}
			lost++
		}
	}
	reasons := strings.Join(run.InvalidReasons, "; ")
	if run.Complete || run.Valid || !strings.Contains(reasons, "load node w2 stopped answering") || lost == 0 || run.Summary.Failed < lost {
		t.Errorf("run.json: complete %v, valid %v, reasons %q, failed %d; %d node_lost records; want incomplete, w2 named, the lost ones failed",
			run.Complete, run.Valid, reasons, run.Summary.Failed, lost)
	}
	t.Logf("w2 killed mid-phase: %d of its requests failed as node_lost", lost)
}
