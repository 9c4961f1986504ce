//go:build raycluster

package q1_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/cli"
)

// TestRayClusterQ1 runs `sagebench run -e Q1 --backend ray --quick` on
// the real cluster at $RAY_ADDRESS against the embedded reference stack,
// which listens on 127.0.0.1: the cluster must run on this machine (ray
// start --head), or set SAGEBENCH_RAY_TARGET to a target URL its
// workers can reach.
func TestRayClusterQ1(t *testing.T) {
	addr := os.Getenv("RAY_ADDRESS")
	if addr == "" {
		t.Fatal("RAY_ADDRESS is not set: the raycluster tests need a real cluster's dashboard URL")
	}
	target := os.Getenv("SAGEBENCH_RAY_TARGET")
	if target == "" {
		target = "embedded"
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, []string{"run", "-e", "Q1", "--quick", "--backend", "ray", "--ray-address", addr,
		"--target", target, "--output-dir", dir, "-v"}, &stdout, &stderr)
	if code != cli.ExitOK && code != cli.ExitInvalidRun {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "q1", "q1-ray-*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	reqs := readJSONL(t, filepath.Join(dirs[0], "requests.jsonl"))
	txns, _ := byTxn(t, reqs)
	if len(txns) != 100 {
		t.Fatalf("%d transactions recorded, want 100 (quick scale)", len(txns))
	}
	b, _ := os.ReadFile(filepath.Join(dirs[0], "run.json"))
	if !strings.Contains(string(b), "driver runtime ray") || !strings.Contains(string(b), "warm-up before the schedule's zero") {
		t.Errorf("run.json does not say the driver ran on Ray with its actors ready before the schedule:\n%s", b)
	}
	t.Logf("%s", stdout.String())
}
