package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAggregateOversizedInput (issue 41, hole 5): a 452 MB
// unified_results.jsonl (sparse here) is refused, exit 2, one line
// naming the file and the bound, nothing printed on stdout; on 1f05fb9
// aggregate read it for 43.6 s and 3.24 GB.
func TestAggregateOversizedInput(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "unified_results.jsonl")
	if err := os.WriteFile(p, []byte(`{"backend":"b","workload":"Q2","run_id":"r1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 452<<20); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := invokeCLI(t, "aggregate", dir)
	if code != ExitUsage || !strings.Contains(stderr, p) || !strings.Contains(stderr, "more than 33554432 bytes") ||
		strings.Count(strings.TrimSpace(stderr), "\n") > 0 || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q: want 2, one line naming %s and the bound", code, stdout, stderr, p)
	}
}
