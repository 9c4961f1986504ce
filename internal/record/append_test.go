package record

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func unifiedRowFor(id string) Unified {
	return Unified{Backend: "sage", Workload: "Q2", RunID: id, Timestamp: "2026-01-01T00:00:00Z",
		Metadata: map[string]any{"note": strings.Repeat("n", 600)}}
}

// readUnifiedRows reads root's unified_results.jsonl and .csv and fails
// on any line that is not a whole row.
func readUnifiedRows(t *testing.T, root string) (jsonl, csvRows int) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, UnifiedJSONL))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ReadUnified(f, UnifiedJSONL, func(int, Unified) { jsonl++ }); err != nil {
		t.Errorf("unified_results.jsonl: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(root, UnifiedCSV))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("unified_results.csv ends inside a row: %q", b[max(0, len(b)-40):])
	}
	return jsonl, bytes.Count(b, []byte("\n")) - 1
}

// TestAppendFullDiskChild is the child of TestAppendUnifiedFullDisk: it
// appends a row under a file-size limit (the kernel writes what fits and
// fails the rest, as a full disk does).
func TestAppendFullDiskChild(t *testing.T) {
	root := os.Getenv("SAGEBENCH_FSIZE_CHILD")
	if root == "" {
		t.Skip("only run as the child of TestAppendUnifiedFullDisk")
	}
	limit, _ := strconv.ParseUint(os.Getenv("SAGEBENCH_FSIZE_LIMIT"), 10, 64)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	if err := AppendUnified(root, unifiedRowFor("cut")); err == nil {
		t.Fatal("the append under a full disk reported no error")
	}
}

// TestAppendUnifiedFullDisk is attack 6 of issue 28: a full disk during
// the append of a unified row left a cut row, and the next run's row
// glued to it. Now the failed append is cut back to the last whole row
// and the next append starts on a line of its own.
func TestAppendUnifiedFullDisk(t *testing.T) {
	root := t.TempDir()
	if err := AppendUnified(root, unifiedRowFor("first")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, UnifiedJSONL))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAppendFullDiskChild$")
	cmd.Env = append(os.Environ(), "SAGEBENCH_FSIZE_CHILD="+root, fmt.Sprintf("SAGEBENCH_FSIZE_LIMIT=%d", st.Size()+100))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if n, _ := readUnifiedRows(t, root); n != 1 {
		t.Errorf("after the failed append: %d rows, want the first one only", n)
	}
	if err := AppendUnified(root, unifiedRowFor("next")); err != nil {
		t.Fatal(err)
	}
	if n, c := readUnifiedRows(t, root); n != 2 || c != 2 {
		t.Errorf("after the next append: %d JSON rows and %d CSV rows, want 2 whole ones each", n, c)
	}
}

// TestAppendRepairsACutTail: a row cut by a crash (no newline at the
// end) is dropped by the next append instead of gluing onto it.
func TestAppendRepairsACutTail(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, UnifiedJSONL)
	if err := AppendUnified(root, unifiedRowFor("first")); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"backend":"sage","workl`)
	f.Close()
	if err := AppendUnified(root, unifiedRowFor("second")); err != nil {
		t.Fatal(err)
	}
	if n, _ := readUnifiedRows(t, root); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}

// TestAppendRefusesSymlinks is attack 6 of issue 28: a symbolic link
// planted at unified_results.jsonl (or .csv) was written through. Now
// the append is refused and the link's target is left as it was.
func TestAppendRefusesSymlinks(t *testing.T) {
	for _, name := range []string{UnifiedJSONL, UnifiedCSV} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
			err := AppendUnified(root, unifiedRowFor("r"))
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("append through a symlink: %v, want a refusal", err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the link's target was written: %q", b)
			}
		})
	}
}

// TestAppendRefusesAFIFO: a FIFO at the path is refused at once (it
// would block the run until a reader came).
func TestAppendRefusesAFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, UnifiedJSONL), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendUnified(root, unifiedRowFor("r")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("append to a FIFO: %v, want a refusal", err)
	}
}
