package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func reportRun(id string) string { return filepath.Join("..", "report", "testdata", "runs", id) }

// quickFixtures is the report's root of real quick runs (one per Q, and
// three Q2 repetitions under compare).
var quickFixtures = filepath.Join("..", "report", "testdata", "quick")

func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new", "dir", "r.html") // its directory is created, as run's is
	code, stdout, stderr := invokeCLI(t, "report", reportRun("q3-sage-r0"), reportRun("q3-broken"), "-o", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "2 runs (1 invalid) in 1 sections") {
		t.Errorf("stdout %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "INVALID") || strings.Count(string(b), "<svg") < 5 {
		t.Errorf("report page: %v; want the invalid banner and the figures", err)
	}
}

// TestReportOfResultsRoot: a results root is searched for its runs; one
// with none is a usage error.
func TestReportOfResultsRoot(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := invokeCLI(t, "report", quickFixtures, "--output-dir", dir)
	if code != ExitOK || !strings.Contains(stdout, "11 runs (1 invalid) in 8 sections") {
		t.Fatalf("exit %d stdout %q stderr %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("--output-dir DIR writes DIR/report.html: %v", err)
	}
	code, _, stderr = invokeCLI(t, "report", t.TempDir())
	if code != ExitUsage || !strings.Contains(stderr, "no run directory found") {
		t.Errorf("an empty root: exit %d stderr %q, want 2 and no run directory found", code, stderr)
	}
}

func TestReportFigureFiles(t *testing.T) {
	for _, format := range []string{"svg", "pdf", "png"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "figs", "new")
			code, stdout, stderr := invokeCLI(t, "report", reportRun("q3-sage-r0"), "--format", format, "-o", dir)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*."+format))
			if len(files) != 6 || !strings.Contains(stdout, "wrote 6 figures") {
				t.Errorf("%d %s files (%s), want 6", len(files), format, stdout)
			}
		})
	}
}

func TestReportBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no dir", []string{"report"}, "arg(s)"},
		{"missing dir", []string{"report", "does/not/exist"}, "is not a directory"},
		{"bad format", []string{"report", reportRun("q3-sage-r0"), "--format", "gif"}, "--format"},
		{"figures into a file", []string{"report", reportRun("q3-sage-r0"), "--format", "svg", "-o", file}, "is a file"},
		{"two outputs", []string{"report", reportRun("q3-sage-r0"), "-o", "a.html", "--output-dir", "b"}, "name different places"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := invokeCLI(t, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d stderr %q, want %d and %q", code, stderr, ExitUsage, tt.want)
			}
		})
	}
}
