package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBaselineCommand(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	src := compareTempFile(t, "bench.txt", gateBench(1000, 10))
	out := t.TempDir()
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"save", []string{"baseline", "save", "--dir", store, "--key", "gobench-main-aaa", src}, ExitOK, `saved baseline "gobench-main-aaa": 1 files`, ""},
		{"save second", []string{"baseline", "save", "--dir", store, "--key", "gobench-main-bbb", src}, ExitOK, "saved", ""},
		{"list", []string{"baseline", "list", "--dir", store}, ExitOK, "gobench-main-bbb", ""},
		{"list json", []string{"baseline", "list", "--dir", store, "--format", "json"}, ExitOK, `"ok": true`, ""},
		{"restore exact", []string{"baseline", "restore", "--dir", store, "--key", "gobench-main-aaa", filepath.Join(out, "a.txt")}, ExitOK, "restored baseline \"gobench-main-aaa\"", ""},
		{"restore prefix", []string{"baseline", "restore", "--dir", store, "--key", "gobench-pr-7", "--restore-key", "gobench-main-", filepath.Join(out, "b.txt")}, ExitOK, "restored baseline \"gobench-main-bbb\"", ""},
		{"restore missing", []string{"baseline", "restore", "--dir", store, "--key", "nope", filepath.Join(out, "c.txt")}, ExitInconclusive, "", "no baseline found"},
		{"no dir", []string{"baseline", "list"}, ExitUsage, "", "--dir is required"},
		{"no key", []string{"baseline", "save", "--dir", store, src}, ExitUsage, "", "--key"},
		{"missing source", []string{"baseline", "save", "--dir", store, "--key", "k", filepath.Join(out, "none")}, ExitUsage, "", "no such file"},
		{"restore without keys", []string{"baseline", "restore", "--dir", store, filepath.Join(out, "d.txt")}, ExitUsage, "", "--key"},
		{"restore onto an existing file", []string{"baseline", "restore", "--dir", store, "--key", "gobench-main-aaa", src}, ExitUsage, "", "exists"},
	}
	for _, st := range steps {
		code, stdout, stderr := invokeCLI(t, st.args...)
		if code != st.code || !strings.Contains(stdout, st.stdout) || !strings.Contains(stderr, st.stderr) {
			t.Fatalf("%s: exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", st.name, code, st.code, stdout, stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "a.txt"))
	if err != nil || string(b) != gateBench(1000, 10) {
		t.Fatalf("restored content differs: %v", err)
	}
	// Damage a stored file: restore refuses with exit 2, list flags it, and
	// the gate on a missing restore is inconclusive.
	entry := filepath.Join(store, "gobench-main-aaa", "data", "bench.txt")
	if err := os.WriteFile(entry, []byte("BenchmarkEncode-2 1 1 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(out, "e.txt")
	if code, _, stderr := invokeCLI(t, "baseline", "restore", "--dir", store, "--key", "gobench-main-aaa", dst); code != ExitUsage || !strings.Contains(stderr, "integrity check") {
		t.Fatalf("corrupt restore: exit %d, %s", code, stderr)
	}
	if code, stdout, _ := invokeCLI(t, "baseline", "list", "--dir", store); code != ExitOK || !strings.Contains(stdout, "REJECTED") {
		t.Fatalf("list: %d %s", code, stdout)
	}
	if code, _, _ := invokeCLI(t, "gate", dst, src); code != ExitInconclusive {
		t.Fatalf("gate on a rejected baseline: exit %d", code)
	}
}
