// Package drilltest runs drills end to end in tests: Main makes the test
// binary act as `sagebench` when a stack starts it as a process engine,
// and Run runs `sagebench run` in-process through cli.Main and reads the
// run directory back.
package drilltest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/cli"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// ChildEnv, set to 1, makes the test binary run sagebench's CLI.
const ChildEnv = "SAGEBENCH_DRILLTEST_CLI"

// Main runs the tests, or sagebench's CLI in a child the tests started.
func Main(m *testing.M) {
	if os.Getenv(ChildEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Loose keeps validity out of the way: the tests check records and
// behaviour, not the timing of a loaded shared machine.
const Loose = "validity: {max_lag_p99_ms: 60000, min_delivered_ratio: 0.01}\n"

// Result is a finished `sagebench run`.
type Result struct {
	Code           int
	Stdout, Stderr string
	Dir            string
	Run            record.Run
	Events         []map[string]any
	Windows        []map[string]any
}

// Metric is the run's result metric called name (the zero Metric when
// the run has no result or no such metric).
func (r Result) Metric(name string) result.Metric {
	if r.Run.Result == nil {
		return result.Metric{}
	}
	m, _ := r.Run.Result.Metric(name)
	return m
}

// Count is the measured value of the count metric called name, or -1
// when it was not measured.
func (r Result) Count(name string) int {
	m := r.Metric(name)
	if !m.Measured() {
		return -1
	}
	return int(m.Value)
}

// NotPerformed is the run's invalid reason naming the drill events that
// did not happen ("" when every event did).
func (r Result) NotPerformed() string {
	for _, reason := range r.Run.InvalidReasons {
		if strings.HasPrefix(reason, "drill events did not happen") {
			return reason
		}
	}
	return ""
}

// Run runs `sagebench run -e q -c <body> --output-dir <tmp> args…` with
// process engines served by this test binary, within d.
func Run(t *testing.T, q, body string, d time.Duration, args ...string) Result {
	t.Helper()
	t.Setenv(ChildEnv, "1")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var stdout, stderr bytes.Buffer
	res := Result{Code: cli.Main(ctx, append([]string{"run", "-e", q, "-c", cfg, "--output-dir", out}, args...), &stdout, &stderr)}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	sec := strings.ToLower(q)
	dirs, _ := filepath.Glob(filepath.Join(out, sec, sec+"-*"))
	if len(dirs) != 1 {
		return res
	}
	res.Dir = dirs[0]
	b, err := os.ReadFile(filepath.Join(res.Dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res.Run); err != nil {
		t.Fatal(err)
	}
	if res.Run.Complete {
		workloadtest.CheckAnswer(t, res.Dir, res.Run, res.Stdout)
		workloadtest.CheckRecompute(t, res.Dir)
	}
	res.Events = readLines(t, filepath.Join(res.Dir, "events.jsonl"))
	res.Windows = readLines(t, filepath.Join(res.Dir, "windows.jsonl"))
	return res
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}
