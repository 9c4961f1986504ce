package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAggregateCommand(t *testing.T) {
	results := filepath.Join("..", "leaderboard", "testdata", "results")
	code, stdout, stderr := invokeCLI(t, "aggregate", results)
	// testdata holds one unreadable line on purpose: the board is printed, exit 2.
	if code != ExitUsage || !strings.Contains(stderr, "unified_results.jsonl:4") {
		t.Errorf("exit %d stderr %q: want 2 and the unreadable line named", code, stderr)
	}
	if !strings.Contains(stdout, "# Leaderboard") || !strings.Contains(stdout, "## Invalid runs (not averaged)") {
		t.Errorf("stdout lacks the leaderboard:\n%s", stdout)
	}
	clean := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(results, "a", "unified_results.jsonl"))
	os.WriteFile(filepath.Join(clean, "unified_results.jsonl"), data, 0o644)
	code, stdout, stderr = invokeCLI(t, "aggregate", clean, "--format", "csv")
	if code != ExitOK || !strings.HasPrefix(stdout, "status,workload,label,scale,backend") {
		t.Errorf("exit %d stderr %q stdout %q", code, stderr, stdout)
	}
}

func TestAggregateBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing dir", []string{"aggregate", "does/not/exist"}, "results:"},
		{"empty dir", []string{"aggregate", t.TempDir()}, "holds no unified_results.jsonl"},
		{"bad format", []string{"aggregate", t.TempDir(), "--format", "xml"}, "--format"},
		{"bad confidence", []string{"aggregate", t.TempDir(), "--confidence", "2"}, "confidence"},
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
