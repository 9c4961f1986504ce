package micro

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestReportGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Report(&out, bytes.NewReader(in), "bench.txt"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("report differs from %s (rerun with -update):\n%s", golden, out.String())
	}
}

func TestReportWithoutResults(t *testing.T) {
	err := Report(&bytes.Buffer{}, strings.NewReader("goos: linux\nBenchmarkOther 10 5 ns/op\n"), "x")
	if !errors.Is(err, ErrNoResults) {
		t.Errorf("err = %v, want ErrNoResults", err)
	}
}
