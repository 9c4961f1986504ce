package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/target/targettest"
)

// runCLI runs `sagebench args...` in-process and returns its exit code and
// output. stderr takes lines from other goroutines too (the NATS
// coordinator's callbacks): it is a goroutine-safe buffer.
func runCLI(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout bytes.Buffer
	var stderr syncBuffer
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
  rounds: 1
  policies: [fifo, priority]
`

// runDirs returns the run directories under out/q2 (not the aggregate
// of the repetitions).
func runDirs(t *testing.T, out string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "q2", "q2-sage-[0-9]*"))
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
	var out []record.Request
	if err := record.ReadRequestsFile(filepath.Join(dir, "requests.jsonl"), func(_ int, r record.Request) { out = append(out, r) }); err != nil {
		t.Fatal(err)
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

// TestRunQ2Embedded is the end-to-end check: Q2 against the in-process
// reference stack, two policies of 20 requests at 20 req/s.
func TestRunQ2Embedded(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, `
validity:
  max_lag_p99_ms: 1000
  min_delivered_ratio: 0.5
q2:
  schedule: {process: poisson, rate: 20, count: 20}
  policies: [fifo, priority]
`)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "--quick", "-c", cfg, "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	run := readRun(t, dirs[0])
	if !run.Complete || !strings.HasPrefix(run.Target, "embedded reference stack at http://127.0.0.1:") {
		t.Errorf("complete %v, target %q", run.Complete, run.Target)
	}
	engines := map[string]bool{}
	phases := map[string]int{}
	for _, r := range readRequests(t, dirs[0]) {
		if !r.OK {
			t.Errorf("request %s failed: %s %s", r.ID, r.ErrorClass, r.Error)
		}
		engines[r.Engine] = true
		phases[r.Phase]++
		if r.Type == "llm" && (r.FirstToken == 0 || len(r.TokenNS) == 0 || r.TTFTMs <= 0) {
			t.Errorf("llm request %s without token timing", r.ID)
		}
	}
	if phases["fifo"] != 20 || phases["priority"] != 20 || len(engines) < 2 {
		t.Errorf("phases %v, engines %v", phases, engines)
	}
	for _, want := range []string{"policy", "fifo", "priority", "goodput", "valid: yes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	checkBench(t, filepath.Join(dirs[0], "bench.txt"))
}

// TestRunInterruptedCLI cancels the context mid-run: the records say
// "complete": false and the exit code is 1.
func TestRunInterruptedCLI(t *testing.T) {
	srv := targettest.NewServer(targettest.OK)
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, "drain: 500ms\nq2:\n  schedule: {process: poisson, rate: 20, count: 200}\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(400*time.Millisecond, cancel)
	code, _, stderr := runCLI(t, ctx, "run", "-e", "Q2", "-c", cfg, "--target", srv.URL, "--output-dir", out)
	if code != ExitError || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	if run := readRun(t, dirs[0]); run.Complete || run.Valid {
		t.Errorf("interrupted run says complete=%v valid=%v", run.Complete, run.Valid)
	}
}

// TestRunInvalidExit5 makes the driver miss its schedule (one request in
// flight at a time against a slow target): the run is recorded invalid and
// the command exits 5.
func TestRunInvalidExit5(t *testing.T) {
	srv := targettest.NewServer(targettest.OK)
	srv.TokenDelay = 40 * time.Millisecond
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, "q2:\n  schedule: {process: constant, rate: 50, count: 6}\n  llm_ratio: 1\n  max_in_flight: 1\n  policies: [fifo]\n")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "-c", cfg, "--target", srv.URL, "--output-dir", out)
	if code != ExitInvalidRun || !strings.Contains(stderr, "invalid run") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	run := readRun(t, runDirs(t, out)[0])
	if run.Valid || !run.Complete || !strings.Contains(strings.Join(run.InvalidReasons, ";"), "schedule lag p99") {
		t.Errorf("valid %v complete %v reasons %v", run.Valid, run.Complete, run.InvalidReasons)
	}
}

// TestRunRejectedExit5: a run in which the target refused every request
// of a type with a 4xx (here: every request, 404 model_not_found) is not
// a measurement: exit 5 with that reason, never "valid".
func TestRunRejectedExit5(t *testing.T) {
	srv := targettest.NewServer(targettest.Reject)
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, tinyQ2)
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "-c", cfg, "--target", srv.URL, "--output-dir", out)
	if code != ExitInvalidRun || !strings.Contains(stderr, "refused with a 4xx") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	run := readRun(t, runDirs(t, out)[0])
	if run.Valid || !run.Complete {
		t.Errorf("valid %v complete %v reasons %v", run.Valid, run.Complete, run.InvalidReasons)
	}
}

// TestRunErrCode: a model the target does not list is a configuration
// error (exit 2) however the runner wraps it; other run errors are tool
// errors (exit 1).
func TestRunErrCode(t *testing.T) {
	ume := &target.UnknownModelError{URL: "http://127.0.0.1:1", Missing: []string{"x"}, Have: []string{"y"}}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"unknown model", ume, ExitUsage},
		{"unknown model, wrapped", fmt.Errorf("Q2 repetition 0: %w", ume), ExitUsage},
		{"unreachable", &target.UnreachableError{URL: "http://127.0.0.1:1", Err: errors.New("refused")}, ExitError},
	}
	for _, tc := range tests {
		if got := runErrCode(tc.err); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRunAdminFailureIsAToolError: a target whose /admin/policy answers
// 500 is broken, not refusing a policy: the run stops with exit 1 and the
// target's message, instead of skipping every policy and calling the run
// invalid.
func TestRunAdminFailureIsAToolError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/admin/policy":
			http.Error(w, "policy store is down", http.StatusInternalServerError)
		default: // lists the models Q2 asks for, so the preflight passes
			w.Write([]byte(`{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct"},{"id":"BAAI/bge-small-en-v1.5"}]}`))
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, tinyQ2)
	code, _, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "-c", cfg, "--target", srv.URL, "--output-dir", filepath.Join(dir, "out"))
	if code != ExitError || !strings.Contains(stderr, "policy store is down") {
		t.Fatalf("exit %d, stderr %q; want 1 with the target's message", code, stderr)
	}
}

// TestRunUnknownModelExit2: a model the target does not list is a config
// error, found before any traffic.
func TestRunUnknownModelExit2(t *testing.T) {
	srv := targettest.NewServer(targettest.OK)
	srv.Models = []string{"other-llm", "other-embed"}
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, tinyQ2)
	code, _, stderr := runCLI(t, context.Background(), "run", "-e", "Q2", "-c", cfg, "--target", srv.URL, "--output-dir", out)
	if code != ExitUsage || !strings.Contains(stderr, `"other-llm"`) || !strings.Contains(stderr, "meta-llama/Llama-3.1-8B-Instruct") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the missing model and the listed ones", code, stderr)
	}
	if n := len(srv.Headers()); n != 0 {
		t.Errorf("%d requests sent before the config error", n)
	}
	if _, err := os.Stat(filepath.Join(out, "q2")); err == nil {
		t.Errorf("a run directory was written for a config error")
	}
}
