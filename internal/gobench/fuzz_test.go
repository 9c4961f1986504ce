package gobench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/gate"
)

// FuzzGoTestOutput feeds arbitrary `go test -bench` output (benchmark
// lines mixed with logs, panics, FAIL lines, garbage) through what
// gobench does with a side's output: read it as a bench set and gate it
// against itself. Nothing may panic, and a verdict is always one of the
// gate's.
func FuzzGoTestOutput(f *testing.F) {
	for _, s := range []string{
		"goos: linux\ngoarch: amd64\npkg: x\nBenchmarkA-2   \t 1000\t 1234 ns/op\t 16 B/op\t 1 allocs/op\nPASS\nok  \tx\t1.2s\n",
		"BenchmarkA 1 NaN ns/op\nBenchmarkA 1 -5 ns/op\nBenchmarkA 0 1e400 ns/op\n",
		"--- FAIL: BenchmarkB\n    b_test.go:12: boom\npanic: runtime error\ngoroutine 1 [running]:\nFAIL\tx\t0.01s\n",
		"Benchmark" + strings.Repeat("X", 10000) + " 1 1 ns/op\n",
		"BenchmarkA 1 1 ns/op " + strings.Repeat("1 x/op ", 2000) + "\n",
		"unit ns/op assume=exact better=higher\nBenchmarkA 5 1 ns/op\n",
	} {
		f.Add([]byte(s), []byte("BenchmarkA 1000 1000 ns/op\n"))
	}
	f.Fuzz(func(t *testing.T, base, cur []byte) {
		b, err := benchset.ReadBench(bytes.NewReader(base), "base.txt", "base")
		if err != nil {
			return
		}
		c, err := benchset.ReadBench(bytes.NewReader(cur), "current.txt", "current")
		if err != nil {
			return
		}
		out, err := gate.Evaluate(b, c, gate.Default())
		if err != nil {
			return
		}
		if out.Verdict < gate.Pass || out.Verdict > gate.Regression {
			t.Fatalf("verdict %v out of range", out.Verdict)
		}
	})
}

// FuzzWorktreeChanges: whatever `git status --porcelain --ignored`
// prints, every reported change is one of its non-blank lines.
func FuzzWorktreeChanges(f *testing.F) {
	f.Add(" M go.mod\n?? new.go\n!! bin/\n!! gen/x.go\n")
	f.Add("!! \n\n\r\n")
	f.Fuzz(func(t *testing.T, status string) {
		lines := map[string]bool{}
		for _, l := range strings.Split(status, "\n") {
			lines[l] = true
		}
		for _, c := range worktreeChanges(status) {
			if strings.TrimSpace(c) == "" || !lines[c] {
				t.Fatalf("reported %q, not a non-blank line of the input", c)
			}
		}
	})
}
