package leaderboard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeRows writes n rows, each padded to about pad bytes, to
// dir/unified_results.jsonl.
func writeRows(t *testing.T, dir string, n, pad int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"backend":"b","workload":"Q2","run_id":"r%d","metadata":{"pad":%q}}`+"\n", i, strings.Repeat("x", pad))
	}
	p := filepath.Join(dir, "unified_results.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCollectBounds (issue 41, hole 5): aggregate's input is bounded like
// compare's — bytes of one file, bytes and rows of all files, files —
// and refused as a whole with a *LimitError naming the file and the
// bound, before it is read. On 1f05fb9 each of these was read whole.
func TestCollectBounds(t *testing.T) {
	t.Run("a 40 MB file", func(t *testing.T) {
		dir := t.TempDir()
		p := writeRows(t, dir, 2000, 20_000)
		_, err := Collect(dir)
		var le *LimitError
		if !errors.As(err, &le) || le.File != p || le.Limit != MaxFileBytes || !strings.Contains(err.Error(), "33554432 bytes") {
			t.Errorf("err %v, want a *LimitError naming %s and %d bytes", err, p, MaxFileBytes)
		}
	})
	t.Run("a sparse 452 MB file", func(t *testing.T) {
		dir := t.TempDir()
		p := writeRows(t, dir, 1, 0)
		if err := os.Truncate(p, 452<<20); err != nil {
			t.Fatal(err)
		}
		if _, err := Collect(p); !errors.As(err, new(*LimitError)) {
			t.Errorf("err %v, want a *LimitError", err)
		}
	})
	t.Run("rows of all files", func(t *testing.T) {
		dir := t.TempDir()
		writeRows(t, filepath.Join(mkdir(t, dir, "a")), MaxRows/2, 0)
		writeRows(t, filepath.Join(mkdir(t, dir, "b")), MaxRows/2+1, 0)
		_, err := Collect(dir)
		var le *LimitError
		if !errors.As(err, &le) || !strings.Contains(le.File, "b") || le.Limit != MaxRows {
			t.Errorf("err %v, want a *LimitError at the %d rows of b", err, MaxRows)
		}
	})
	t.Run("a FIFO", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, "unified_results.jsonl"), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		if _, err := Collect(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err %v, want the FIFO refused (not opened: it would block)", err)
		}
	})
}

func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
