// Package workloadtest runs a Q through `sagebench run` in-process
// (cli.Main) for the Q packages' CLI tests, and reads back what it wrote:
// the exit code, the output, run.json, bench.txt and the unified rows.
package workloadtest

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
	"github.com/sagebench/sagebench/internal/record"
)

// Loose keeps validity out of the way: CLI tests check records and
// behaviour, not the timing of a loaded, shared test machine.
const Loose = "validity: {max_lag_p99_ms: 60000, min_delivered_ratio: 0.01}\n"

// Result is what one `sagebench run` left.
type Result struct {
	Code           int
	Stdout, Stderr string
	Dirs           []string     // run directories, in name order
	Runs           []record.Run // their run.json
	Bench          string       // bench.txt of the first run
	Unified        string       // unified_results.jsonl
	Out            string       // the output root
}

// Run runs `sagebench run -e id -c <config> --output-dir <tmp> args…`
// with config as the config file, cancelled after limit.
func Run(t *testing.T, limit time.Duration, id, config string, args ...string) Result {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	res := Result{Out: out, Code: cli.Main(ctx, append([]string{"run", "-e", id, "-c", cfg, "--output-dir", out}, args...), &stdout, &stderr)}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	sec := strings.ToLower(id)
	res.Dirs, _ = filepath.Glob(filepath.Join(out, sec, sec+"-*"))
	for _, d := range res.Dirs {
		var r record.Run
		b, err := os.ReadFile(filepath.Join(d, "run.json"))
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		res.Runs = append(res.Runs, r)
		if r.Complete {
			CheckAnswer(t, d, r, res.Stdout)
			CheckRecompute(t, d)
		}
	}
	if len(res.Dirs) > 0 {
		b, _ := os.ReadFile(filepath.Join(res.Dirs[0], "bench.txt"))
		res.Bench = string(b)
	}
	b, _ := os.ReadFile(filepath.Join(out, "unified_results.jsonl"))
	res.Unified = string(b)
	return res
}

// CheckAnswer fails t unless the run in dir has a typed result that keeps
// its model (every metric in one of the four states, a measured value
// finite and inside its domain) and leads summary.md and stdout with its
// answer sentence.
func CheckAnswer(t *testing.T, dir string, run record.Run, stdout string) {
	t.Helper()
	if run.Result == nil {
		t.Errorf("%s: run.json has no result", dir)
		return
	}
	if err := run.Result.Check(); err != nil {
		t.Errorf("%s: the result breaks its model: %v", dir, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Error(err)
		return
	}
	_, rest, _ := strings.Cut(string(md), "\n\n")
	if want := "**Answer:** " + run.Result.Answer + "\n"; !strings.HasPrefix(rest, want) {
		t.Errorf("%s: summary.md does not start with its answer %q:\n%.400s", dir, want, md)
	}
	if !strings.Contains(stdout, "answer: "+run.Result.Answer+"\n") {
		t.Errorf("stdout does not give the answer %q", run.Result.Answer)
	}
}
