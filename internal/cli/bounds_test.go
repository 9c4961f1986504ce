package cli

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCaptureOversizedExporter is attack 4 of issue 28 on capture: an
// exporter answering 24 MiB in one label value (1.37 GB of RSS and a
// 198 MB capture.json before). Every scrape is refused at its bound, the
// command exits 2 naming the bound, and it allocates a few megabytes.
func TestCaptureOversizedExporter(t *testing.T) {
	body := `big{l="` + strings.Repeat("x", 24<<20) + "\"} 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	out := t.TempDir()
	var code int
	var stderr string
	alloc := allocatedBy(func() {
		code, _, stderr = invokeCLI(t, "capture", "--target", srv.URL, "--windows", "1", "--window", "40ms", "--interval", "20ms", "-o", out)
	})
	if code != ExitUsage || !strings.Contains(stderr, "over a bound") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the bound", code, stderr)
	}
	if alloc > 64<<20 {
		t.Errorf("capture allocated %d MiB for an answer it refuses", alloc>>20)
	}
}

// TestGateOversizedInput is attack 4 of issue 28 on gate: a pytest
// JSON over the input bound (a 120 MB one took 12.5 GB of RSS). It is
// refused with exit 2 naming the bound, having read no more than it.
func TestGateOversizedInput(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "current.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"benchmarks":[{"name":"test_x","params":{"p":[`)
	w.WriteString(strings.Repeat(`{},`, (40<<20)/3))
	w.WriteString(`{}]},"stats":{"mean":0.001,"rounds":1}}]}`)
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	var code int
	var stderr string
	alloc := allocatedBy(func() { code, _, stderr = invokeCLI(t, "gate", "--expect", "test_x", big) })
	if code != ExitUsage || !strings.Contains(stderr, "more than") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the bound", code, stderr)
	}
	if alloc > 256<<20 {
		t.Errorf("gate allocated %d MiB for an input it refuses", alloc>>20)
	}
}
