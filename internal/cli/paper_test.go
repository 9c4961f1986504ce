package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPaperQuickFromFixtures is `sagebench paper --quick --from` on the
// example experiment over the fixture runs: every Q's answer figure and
// tables are written, into a directory it creates, and a second
// rendering gives the same bytes.
func TestPaperQuickFromFixtures(t *testing.T) {
	exp := filepath.Join("..", "..", "config", "paper", "sagebench.yaml")
	out1, out2 := filepath.Join(t.TempDir(), "p", "1"), filepath.Join(t.TempDir(), "p", "2")
	// the fixtures hold one seed of each Q: the others are missing, which
	// exits 4 unless --allow-missing (the files are written either way)
	code, _, stderr := invokeCLI(t, "paper", exp, "--quick", "--from", quickFixtures, "--output-dir", filepath.Join(t.TempDir(), "p", "0"))
	if code != ExitInconclusive || !strings.Contains(stderr, "--allow-missing") {
		t.Errorf("samples missing: exit %d stderr %s, want 4 naming --allow-missing", code, stderr)
	}
	for _, out := range []string{out1, out2} {
		code, stdout, stderr := invokeCLI(t, "paper", exp, "--quick", "--from", quickFixtures, "--output-dir", out, "--allow-missing")
		if code != ExitOK || !strings.Contains(stdout, "0 runs made now") {
			t.Fatalf("exit %d stdout %q stderr %s", code, stdout, stderr)
		}
	}
	for _, q := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"} {
		for _, f := range []string{"figures/" + q + "-answer-column.svg", "figures/" + q + "-answer-page.pdf", "tables/" + q + "-summary.tex", "tables/" + q + "-summary.md"} {
			a, err := os.ReadFile(filepath.Join(out1, f))
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if b, _ := os.ReadFile(filepath.Join(out2, f)); !bytes.Equal(a, b) {
				t.Errorf("%s differs between two renderings of the same runs", f)
			}
		}
	}
}

func TestPaperBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("runs:\n  - {q: Q2, scael: quick}\n"), 0o644)
	none := filepath.Join(dir, "none.yaml")
	os.WriteFile(none, []byte("runs:\n  - {q: Q9}\n"), 0o644)
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte("runs:\n  - {q: Q2}\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"paper", bad}, "scael"},
		{"unknown Q", []string{"paper", none}, "Q9"},
		{"missing file", []string{"paper", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"nothing to render", []string{"paper", ok, "--from", t.TempDir()}, "no run of the experiment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := invokeCLI(t, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d stderr %q, want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}
