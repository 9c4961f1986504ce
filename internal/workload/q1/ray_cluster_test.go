package q1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/cli"
	"github.com/sagebench/sagebench/internal/ray/raytest"
)

// TestRayClusterQ1 runs `sagebench run -e Q1 --backend ray --quick` on a
// real Ray cluster against the embedded reference stack. It starts `ray
// start --head` itself (the venv of SAGEBENCH_RAY_VENV, or ray on PATH) on
// free loopback ports and stops it after, or uses the cluster at
// RAY_ADDRESS; it skips when ray is not installed, unless
// SAGEBENCH_REQUIRE_RAY is set (as .ci/run sets it). The embedded stack
// listens on 127.0.0.1, so a RAY_ADDRESS cluster must run on this machine,
// or set SAGEBENCH_RAY_TARGET to a target URL its workers can reach.
func TestRayClusterQ1(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Ray cluster")
	}
	var shared raytest.Shared
	defer shared.Stop()
	cl := shared.Get(t)
	t.Logf("Ray cluster at %s ready %s after ray start", cl.URL, cl.Started.Round(time.Millisecond))
	t.Setenv("RAY_AUTH_TOKEN", cl.Token) // the cluster is secured, as Ray 2.60 is by default once a token exists
	target := os.Getenv("SAGEBENCH_RAY_TARGET")
	if target == "" {
		target = "embedded"
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, []string{"run", "-e", "Q1", "--quick", "--backend", "ray", "--ray-address", cl.URL,
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
	ok := 0
	for _, r := range txns {
		if r.OK {
			ok++
		}
	}
	if ok < 90 {
		t.Errorf("%d of 100 transactions ok on Ray; want ≥ 90 against the embedded stack", ok)
	}
	b, _ := os.ReadFile(filepath.Join(dirs[0], "run.json"))
	if !strings.Contains(string(b), "driver runtime ray") || !strings.Contains(string(b), "warm-up before the schedule's zero") {
		t.Errorf("run.json does not say the driver ran on Ray with its actors ready before the schedule:\n%s", b)
	}
	// recall@k from the ids the driver's retrieve stage reported, judged on
	// the local corpus (sage measures 0.99 on this index).
	var run struct {
		Result struct {
			Metrics []struct {
				Name  string  `json:"name"`
				State string  `json:"state"`
				Value float64 `json:"value"`
			} `json:"metrics"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	recall := -1.0
	for _, m := range run.Result.Metrics {
		if m.Name == "recall_at_k" && m.State == "measured" {
			recall = m.Value
		}
	}
	if recall < 0.8 {
		t.Errorf("recall@k on Ray %v (-1: not measured); want ≥ 0.8 on the embedded index", recall)
	}
	t.Logf("recall@k on Ray: %v", recall)
	t.Logf("%s", stdout.String())
}
