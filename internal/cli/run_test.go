package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target/targettest"
)

// runCLI runs `sagebench args...` in-process and returns its exit code and output.
func runCLI(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeConfig writes a config file into dir and returns its path.
func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyQ2 is a Q2 config small enough for a unit test: 10 requests at
// 20 req/s per policy, two policies, loose validity (timing on a loaded
// test machine is not what these tests check).
const tinyQ2 = `
validity:
  max_lag_p99_ms: 1000
  min_delivered_ratio: 0.5
q2:
  schedule: {process: poisson, rate: 20, count: 10}
  policies: [fifo, priority]
`

// runDirs returns the run directories under out/q2.
func runDirs(t *testing.T, out string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "q2", "q2-sage-*"))
	return m
}

func readRun(t *testing.T, dir string) record.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r record.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	return r
}

func readRequests(t *testing.T, dir string) []record.Request {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Request
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record.Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("requests.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, r)
	}
	return out
}

func TestRunQ2AgainstURLTarget(t *testing.T) {
	srv := targettest.NewServer(targettest.OK)
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, tinyQ2)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "q2", "-c", cfg,
		"--target", srv.URL, "--output-dir", out, "--repeat", "2")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 2 {
		t.Fatalf("want 2 run dirs, got %v", dirs)
	}
	if got := srv.Policies(); strings.Join(got, ",") != "fifo,priority,fifo,priority" {
		t.Errorf("policies switched: %v", got)
	}
	for _, d := range dirs {
		run := readRun(t, d)
		if !run.Complete || !run.Valid || run.Summary.Requests != 20 {
			t.Errorf("%s: complete=%v valid=%v requests=%d reasons=%v", d, run.Complete, run.Valid, run.Summary.Requests, run.InvalidReasons)
		}
		reqs := readRequests(t, d)
		if len(reqs) != 20 {
			t.Errorf("%s: %d request lines, want 20", d, len(reqs))
		}
		checkBench(t, filepath.Join(d, "bench.txt"))
	}
	t.Log(stdout)
	b, _ := os.ReadFile(filepath.Join(dirs[0], "bench.txt"))
	t.Log(string(b))
	b, _ = os.ReadFile(filepath.Join(dirs[0], "summary.md"))
	t.Log(string(b))
	b, _ = os.ReadFile(filepath.Join(out, "unified_results.csv"))
	t.Log(string(b))
}

// checkBench parses bench.txt with benchfmt, as benchstat does.
func checkBench(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := benchfmt.NewReader(f, path)
	n := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("%s: %v", path, rec)
		case *benchfmt.Result:
			n++
			if _, ok := rec.Value("sec/op"); !ok { // benchfmt tidies ns/op
				t.Errorf("%s: %s has no ns/op", path, rec.Name)
			}
		}
	}
	if err := r.Err(); err != nil || n == 0 {
		t.Errorf("%s: err %v, %d results", path, err, n)
	}
}
