package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputOneLineExit2: bad flags and files of every subcommand are
// exit 2 with one line naming what to fix, at once (nothing started,
// nothing written).
func TestBadInputOneLineExit2(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	policy := file("policy.yaml", "alpha: 0.05\n\n\n\nbogus: 1\n")
	stack := file("stack.yaml", "foo: 1\n")
	paper := file("paper.yaml", "foo: 1\n")
	runCfg := file("run.yaml", "target:\n  stack_config: "+filepath.Join(dir, "missing.yaml")+"\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"calibrate --ttft negative", []string{"calibrate", "-e", "Q2", "--ttft", "-1s"}, "calibrate.ttft"},
		{"serve --listen bad port", []string{"serve", "--listen", "127.0.0.1:99999"}, "listen"},
		{"serve --config unknown key", []string{"serve", "--config", stack}, "foo"},
		{"capture --windows 0", []string{"capture", "--target", "http://127.0.0.1:1/metrics", "--windows", "0"}, "--windows 0"},
		{"capture --query without --prometheus", []string{"capture", "--target", "http://127.0.0.1:1/metrics", "--query", "up"}, "--prometheus"},
		{"capture --timeout negative", []string{"capture", "--target", "http://127.0.0.1:1/metrics", "--timeout", "-1s"}, "--timeout"},
		{"gobench --count 0", []string{"gobench", "--base-ref", "HEAD", "--count", "0"}, "--count 0"},
		{"gobench --benchtime negative", []string{"gobench", "--base-ref", "HEAD", "--benchtime", "-5s"}, "benchtime"},
		{"gate --policy unknown key", []string{"gate", "--policy", policy, "a.txt", "b.txt"}, "policy.yaml:5:1"},
		{"run --dry-run with a missing stack_config", []string{"run", "-e", "Q2", "--dry-run", "-c", runCfg}, "target.stack_config"},
		{"paper unknown key", []string{"paper", paper, "-o", filepath.Join(dir, "newpaper")}, "paper.yaml:1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := invokeCLI(t, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line naming %q", code, stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "newpaper")); err == nil {
		t.Errorf("paper made its output directory before refusing its file")
	}
}
