package gobench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/gate"
)

// gitRun runs git in dir with a fixed identity.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=sagebench-test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

const tinyTest = `package tiny

import "testing"

var sink int

func BenchmarkSum(b *testing.B) {
	for b.Loop() {
		sink = Sum(64)
	}
}
`

// tinyModule creates a throwaway git module with a trivial benchmark and
// two commits: HEAD~1 and HEAD differ in Sum's implementation.
func tinyModule(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q")
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/tiny\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "tiny.go"), "package tiny\n\n// Sum adds 0..n-1.\nfunc Sum(n int) int {\n\ts := 0\n\tfor i := 0; i < n; i++ {\n\t\ts += i\n\t}\n\treturn s\n}\n")
	writeFile(t, filepath.Join(dir, "tiny_test.go"), tinyTest)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.md\n*.txt\n")
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-q", "-m", "first")
	writeFile(t, filepath.Join(dir, "tiny.go"), "package tiny\n\n// Sum adds 0..n-1 in closed form.\nfunc Sum(n int) int {\n\treturn n * (n - 1) / 2\n}\n")
	gitRun(t, dir, "commit", "-q", "-am", "second")
	return dir
}

func quickConfig(dir string) Config {
	return Config{Dir: dir, BaseRef: "HEAD~1", Count: 5, Benchtime: "200x",
		Report: filepath.Join(dir, "out", "report.md"), Policy: gate.Default()}
}

func worktrees(t *testing.T, dir string) int {
	return strings.Count(gitRun(t, dir, "worktree", "list"), "\n")
}

func TestRunOnTinyModule(t *testing.T) {
	t.Parallel()
	dir := tinyModule(t)
	cfg := quickConfig(dir)
	cfg.Expect = []string{"BenchmarkSum", "BenchmarkFedAvg"}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The missing symbol makes the verdict inconclusive on both sides.
	// Timing on a shared machine may also be too noisy to decide, but no
	// other evidence may be missing.
	if res.Outcome.Verdict != gate.Inconclusive {
		t.Fatalf("verdict %v with an expected symbol missing", res.Outcome.Verdict)
	}
	var missing []string
	for _, f := range res.Outcome.Findings {
		switch {
		case f.Rule == "expect" && f.Subject == "BenchmarkFedAvg" && f.Verdict == gate.Inconclusive:
			missing = append(missing, f.Detail)
		case f.Verdict == gate.Inconclusive && f.Rule != "geomean":
			t.Fatalf("evidence incomplete: %s", f)
		}
	}
	if all := strings.Join(missing, "\n"); !strings.Contains(all, "not in the base test binaries") || !strings.Contains(all, "not in the current test binaries") {
		t.Fatalf("expect findings: %q", missing)
	}
	report, err := os.ReadFile(res.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`HEAD~1`", "| benchtime | 200x |", "| count | 5 (interleaved", "| alpha | 0.01 |",
		"| time (UTC) |", "| go | go1.", "| OS/arch |", "## Verdict", "Sum", "present on both sides", "report.base.txt"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, p := range []string{res.BasePath, res.CurrentPath} {
		raw, err := os.ReadFile(p)
		if err != nil || strings.Count(string(raw), "BenchmarkSum") != 5 {
			t.Errorf("%s: %v\n%s", p, err, raw)
		}
	}
	if n := worktrees(t, dir); n != 1 {
		t.Fatalf("%d worktrees left (want only the main one)", n)
	}
}

func TestRunInputErrors(t *testing.T) {
	t.Parallel()
	dir := tinyModule(t)
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"missing ref", func(c *Config) { c.BaseRef = "no-such-ref" }, `base ref "no-such-ref" does not exist`},
		{"dirty worktree", func(c *Config) {
			writeFile(t, filepath.Join(dir, "tiny.go"), "package tiny\n\nfunc Sum(n int) int { return 0 }\n")
		}, "uncommitted changes"},
		{"base ref is HEAD", func(c *Config) { c.BaseRef = "HEAD" }, "nothing to compare"},
		{"symbolic ref resolving to HEAD", func(c *Config) { c.BaseRef = "@" }, "nothing to compare"},
		{"ref that looks like an option", func(c *Config) { c.BaseRef = "--all" }, "must not start with '-'"},
		{"git-ignored Go file", func(c *Config) {
			// *.txt and *.md are ignored in tinyModule; an ignored Go file
			// would be built into current only.
			writeFile(t, filepath.Join(dir, ".git", "info", "exclude"), "zz_*.go\n")
			writeFile(t, filepath.Join(dir, "zz_gen.go"), "package tiny\n")
			t.Cleanup(func() { os.Remove(filepath.Join(dir, "zz_gen.go")) })
		}, "zz_gen.go"},
		{"partial policy is not replaced by the default", func(c *Config) {
			c.Policy = gate.Policy{Limits: []gate.Limit{{Benchmark: "Sum", MaxMeanMs: 1e-9}}}
		}, "alpha 0 must be in (0, 1)"},
		{"not a git repo", func(c *Config) { c.Dir = t.TempDir() }, "not inside a git repository"},
		{"bad bench regexp", func(c *Config) { c.Bench = "(" }, "bench"},
		{"bad count", func(c *Config) { c.Count = -1 }, "count -1"},
		{"no ref", func(c *Config) { c.BaseRef = "" }, "base ref is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quickConfig(dir)
			tc.mutate(&cfg)
			_, err := Run(context.Background(), cfg)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want InputError with %q", err, tc.want)
			}
			gitRun(t, dir, "checkout", "-q", "--", ".")
		})
	}
}

// cancelWriter cancels a context when a log line mentions trigger.
type cancelWriter struct {
	trigger string
	cancel  context.CancelFunc
}

func (w cancelWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.trigger) {
		w.cancel()
	}
	return len(p), nil
}

func TestCancelRemovesWorktree(t *testing.T) {
	t.Parallel()
	dir := tinyModule(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := quickConfig(dir)
	cfg.Log = cancelWriter{trigger: "round 1/", cancel: cancel}
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := worktrees(t, dir); n != 1 {
		t.Fatalf("%d worktrees left after cancellation", n)
	}
}

func TestBuildFailureRemovesWorktree(t *testing.T) {
	t.Parallel()
	dir := tinyModule(t)
	writeFile(t, filepath.Join(dir, "tiny_test.go"), tinyTest+"\nfunc broken() { undefined() }\n")
	gitRun(t, dir, "commit", "-q", "-am", "break the build")
	_, err := Run(context.Background(), quickConfig(dir))
	var ie *InputError
	if err == nil || errors.As(err, &ie) || !strings.Contains(err.Error(), "current: building tests of example.com/tiny") {
		t.Fatalf("err = %v, want a build failure of the current side", err)
	}
	if n := worktrees(t, dir); n != 1 {
		t.Fatalf("%d worktrees left after a build failure", n)
	}
}

// TestDefaultsAreTheContract: benchtime 300ms, count 10, cpu 2, alpha 0.01.
func TestDefaultsAreTheContract(t *testing.T) {
	c := Config{BaseRef: "main"}.withDefaults()
	if c.Benchtime != "300ms" || c.Count != 10 || c.CPU != "2" || c.Policy.Alpha != 0.01 {
		t.Fatalf("defaults %+v", c)
	}
	for _, e := range []string{"BenchmarkAggregateParallel/", "BenchmarkAggregateParallel/clients512_dim8192/workersAuto-2", "BenchmarkSum"} {
		if fn := expectFunc(e); fn != "BenchmarkAggregateParallel" && fn != "BenchmarkSum" {
			t.Errorf("expectFunc(%q) = %q", e, fn)
		}
	}
}
