package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gobenchModule makes a throwaway git module with a trivial benchmark and
// two commits.
func gobenchModule(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	files := map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.24\n",
		"tiny.go":      "package tiny\n\nfunc Double(n int) int { return 2 * n }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nvar sink int\n\nfunc BenchmarkDouble(b *testing.B) {\n\tfor b.Loop() {\n\t\tsink = Double(21)\n\t}\n}\n",
		".gitignore":   "gobench-report*\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "README")
	git("commit", "-q", "-m", "two")
	return dir
}

func TestGobenchCommand(t *testing.T) {
	dir := gobenchModule(t)
	report := filepath.Join(dir, "gobench-report.md")
	code, stdout, stderr := invokeCLI(t, "gobench", "--dir", dir, "--base-ref", "HEAD~1", "--count", "5",
		"--benchtime", "100x", "--expect", "BenchmarkDouble/", "--report", report)
	// Timing noise may make the geomean and trend-mean rules inconclusive
	// (4); any other rule must be satisfied.
	if code == ExitInconclusive && strings.Count(stdout, "INCONCLUSIVE") != strings.Count(stdout, "INCONCLUSIVE geomean")+strings.Count(stdout, "INCONCLUSIVE trend-mean") {
		t.Fatalf("evidence incomplete:\n%s", stdout)
	}
	if code != ExitOK && code != ExitRegression && code != ExitInconclusive {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "BenchmarkDouble/: present on both sides") || !strings.Contains(stdout, "verdict:") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "`HEAD~1`") {
		t.Fatalf("report: %v\n%s", err, b)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing ref", []string{"gobench", "--dir", dir, "--base-ref", "v9.9.9"}, ExitUsage, `base ref "v9.9.9" does not exist`},
		{"no ref", []string{"gobench", "--dir", dir}, ExitUsage, "base ref is required"},
		{"bad policy flag", []string{"gobench", "--dir", dir, "--base-ref", "HEAD~1", "--alpha", "2"}, ExitUsage, "alpha 2"},
		{"expect that is no benchmark", []string{"gobench", "--dir", dir, "--base-ref", "HEAD~1", "--expect", "Double/"}, ExitUsage, `expect "Double/": want a benchmark function`},
		{"bad cpu", []string{"gobench", "--dir", dir, "--base-ref", "HEAD~1", "--cpu", "two"}, ExitUsage, `cpu "two": want a comma-separated list`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := invokeCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want %d)\nstderr:\n%s", code, tc.code, stderr)
			}
		})
	}
}

// TestGobenchDefaultsAreTheContract: benchtime 300ms, count 10, cpu 2,
// alpha 0.01, each a flag that overrides it.
func TestGobenchDefaultsAreTheContract(t *testing.T) {
	code, stdout, _ := invokeCLI(t, "gobench", "--help")
	help := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{`--alpha float significance level (overrides the policy) (default 0.01)`,
		`--benchtime string time or NNNx per benchmark run (default "300ms")`,
		`--count int interleaved rounds (samples per side) (default 10)`,
		`--cpu string GOMAXPROCS list passed as -test.cpu (e.g. 1,2,4) (default "2")`} {
		if code != ExitOK || !strings.Contains(help, want) {
			t.Errorf("exit %d, help lacks %q:\n%s", code, want, stdout)
		}
	}
}
