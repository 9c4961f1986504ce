package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func reportRun(id string) string { return filepath.Join("..", "report", "testdata", "runs", id) }

func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := invokeCLI(t, "report", reportRun("q3-sage-r0"), reportRun("q3-broken"), "-o", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "2 runs (1 invalid)") {
		t.Errorf("stdout %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "INVALID run") || strings.Count(string(b), "<svg") < 8 {
		t.Errorf("report page: %v; want the invalid banner and the figures", err)
	}
}

func TestReportFigureFiles(t *testing.T) {
	for _, format := range []string{"svg", "png"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "figs")
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
		{"missing dir", []string{"report", "does/not/exist"}, "is not a run directory"},
		{"bad format", []string{"report", reportRun("q3-sage-r0"), "--format", "pdf"}, "--format"},
		{"figures into a file", []string{"report", reportRun("q3-sage-r0"), "--format", "svg", "-o", file}, "is a file"},
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
