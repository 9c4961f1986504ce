package cli

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunQ1OnNodes: `run -e Q1 --nodes 2` starts an embedded NATS server
// and two real `sagebench worker` processes (this test binary acting as
// the CLI), runs Q1's operators on them and records every transaction.
func TestRunQ1OnNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns worker processes")
	}
	t.Setenv(envTestAsCLI, "1") // the spawned workers inherit it
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "validity: {max_lag_p99_ms: 1000, min_delivered_ratio: 0.5}\n")
	out := filepath.Join(dir, "out")
	var so, se syncBuffer // the workers' stderr is copied into se as the run logs there (-v)
	code := Main(context.Background(), []string{"run", "-e", "Q1", "--quick", "--nodes", "2",
		"--total-requests", "20", "-c", cfg, "--output-dir", out, "-v"}, &so, &se)
	stdout, stderr := so.String(), se.String()
	if code != ExitOK {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "dataflow on NATS JetStream: an embedded server") || !strings.Contains(stdout, "2 workers") {
		t.Errorf("the run does not say where its operators ran:\n%s", stdout)
	}
	if !strings.Contains(stderr, "dataflow on NATS JetStream: submitted 20, delivered 20, duplicates dropped at the sink 0") {
		t.Errorf("--verbose does not give the engine's counts:\n%s", stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "q1", "q1-sage-0-*"))
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	run := readRun(t, dirs[0])
	txns := 0
	for _, r := range readRequests(t, dirs[0]) {
		if r.Kind == "txn" && r.OK {
			txns++
		}
	}
	if txns != 20 || run.Summary.Requests != 20 {
		t.Errorf("%d ok transactions, summary %d; want 20 and 20", txns, run.Summary.Requests)
	}
}

// TestRunNodesOnlyForQ1: the other Qs run one open-loop driver; --nodes
// there is a configuration error saying so.
func TestRunNodesOnlyForQ1(t *testing.T) {
	code, _, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "--nodes", "2", "--dry-run")
	if code != ExitUsage || !strings.Contains(stderr, "Q2 runs on one node") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestRunNodesUnreachableNATS: an external cluster that does not answer is
// a tool error on one line naming its URL, within seconds, and the run
// that never started leaves no run directory behind.
func TestRunNodesUnreachableNATS(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, context.Background(), "run", "-e", "Q1", "--quick", "--total-requests", "5",
		"--nats-url", "nats://127.0.0.1:1", "--output-dir", out)
	if code != ExitError || !strings.Contains(stderr, "nats://127.0.0.1:1") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want 1 and one line naming the URL", code, stderr)
	}
	var left []string
	_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != out {
			left = append(left, path)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("a run that never started left %v", left)
	}
}
