package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func microCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMicroRunsFilteredCases(t *testing.T) {
	code, out, errs := microCLI(t, "micro", "all", "--count", "2", "--benchtime", "2x", "--cpu", "1",
		"--filter", `Codec/format=int8/op=decode/dim=512$|MemoryFloor/bytes=262144/workers=2$`)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"goos: ", "goarch: ", "pkg: github.com/sagebench/sagebench/internal/micro"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := countLines(out, "BenchmarkCodec/format=int8/op=decode/dim=512"); n != 2 {
		t.Errorf("%d int8 decode lines, want 2 (--count 2):\n%s", n, out)
	}
	if n := countLines(out, "BenchmarkMemoryFloor/bytes=262144/workers=2"); n != 2 {
		t.Errorf("%d floor lines, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, "allocs/op") || !strings.Contains(out, "MB/s") {
		t.Errorf("lines lack MB/s or allocs/op:\n%s", out)
	}

	path := filepath.Join(t.TempDir(), "micro.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = microCLI(t, "micro", "report", path)
	if code != ExitUsage || !strings.Contains(errs, "no Codec or Aggregate") {
		t.Errorf("report without a json/zerocopy pair: exit %d, %q", code, errs)
	}
}

func TestMicroReportTabulates(t *testing.T) {
	code, out, errs := microCLI(t, "micro", "all", "--benchtime", "1x",
		"--filter", `Codec/format=(json|zerocopy)/op=decode/dim=512$`)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	path := filepath.Join(t.TempDir(), "micro.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, table, errs := microCLI(t, "micro", "report", path)
	if code != ExitOK || !strings.Contains(table, "| decode | 512 |") {
		t.Errorf("exit %d, stderr %q, table:\n%s", code, errs, table)
	}
}

// TestMicroReportJoinsFilesByLine: a file whose last line has no newline
// must not run into the first line of the next file.
func TestMicroReportJoinsFilesByLine(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, []byte("BenchmarkCodec/format=json/op=decode/dim=512-2 1000 80000 ns/op"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("BenchmarkCodec/format=zerocopy/op=decode/dim=512-2 1000 20 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, table, errs := microCLI(t, "micro", "report", a, b)
	if code != ExitOK || !strings.Contains(table, "| decode | 512 |") {
		t.Errorf("exit %d, stderr %q, table:\n%s", code, errs, table)
	}
}

func TestMicroBadUsage(t *testing.T) {
	tests := map[string][]string{
		"no suite":       {"micro"},
		"unknown suite":  {"micro", "gpu"},
		"bad count":      {"micro", "codec", "--count", "0"},
		"bad cpu":        {"micro", "codec", "--cpu", "-1"},
		"bad benchtime":  {"micro", "codec", "--benchtime", "fast"},
		"bad regex":      {"micro", "codec", "--filter", "("},
		"matches none":   {"micro", "codec", "--filter", "Aggregate"},
		"unknown flag":   {"micro", "codec", "--bogus"},
		"missing report": {"micro", "report", "/nonexistent/micro.txt"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			code, out, errs := microCLI(t, args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitUsage, errs)
			}
			if out != "" || errs == "" {
				t.Errorf("want only an error on stderr; stdout %q, stderr %q", out, errs)
			}
		})
	}
}

// countLines counts result lines whose name field is exactly name.
func countLines(out, name string) int {
	n := 0
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			n++
		}
	}
	return n
}

// TestMicroMohawkNames: --names mohawk prints the FedAvg matrix under the
// contract's names, which micro report and gate read like sagebench's.
func TestMicroMohawkNames(t *testing.T) {
	code, out, errs := microCLI(t, "micro", "fedavg", "--names", "mohawk", "--machine-cache", "off", "--benchtime", "1x", "--count", "5",
		"--filter", `clients=32/dim=2048/workers=(1|auto)$|MemoryFloor/bytes=262144/workers=1$`)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"BenchmarkAggregateParallel/clients32_dim2048/workersAuto", "BenchmarkAggregateParallel/clients32_dim2048/workers1", "BenchmarkMemoryFloor/bytes=262144/workers=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "BenchmarkAggregate/") {
		t.Errorf("sagebench names left in mohawk output:\n%s", out)
	}
	path := filepath.Join(t.TempDir(), "mohawk.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, table, errs := microCLI(t, "micro", "report", path)
	if code != ExitOK || !strings.Contains(table, "| 32 | 2048 | 1 |") {
		t.Fatalf("report of mohawk names: exit %d %s\n%s", code, errs, table)
	}
	code, gateOut, _ := microCLI(t, "gate", "--policy", ciFixture("mohawk-limits.yaml"), "--expect", "BenchmarkAggregateParallel/", path)
	if !strings.Contains(gateOut, "PASS         expect       BenchmarkAggregateParallel/: present in current") {
		t.Fatalf("gate on mohawk names: exit %d\n%s", code, gateOut)
	}
	if code, _, errs = microCLI(t, "micro", "fedavg", "--names", "benchstat"); code != ExitUsage || !strings.Contains(errs, `names "benchstat"`) {
		t.Fatalf("bad --names: exit %d %q", code, errs)
	}
}

// TestMicroAutoProbeIsCached: the first run probes and writes the cache,
// the second revalidates it; --auto fallback skips the probe. (A probe
// that fails its checks on a busy machine runs with the fallback, and
// says so.)
func TestMicroAutoProbeIsCached(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "machine.json")
	args := []string{"micro", "fedavg", "--benchtime", "1x", "--machine-cache", cache, "--filter", `clients=32/dim=2048/workers=auto$`}
	code, out, errs := microCLI(t, args...)
	if code != ExitOK || !strings.Contains(errs, "micro: workers=auto: ") ||
		!(strings.Contains(errs, "; probed now in ") || strings.Contains(errs, "the probe failed its checks")) ||
		!strings.Contains(out, "BenchmarkAggregate/clients=32/dim=2048/workers=auto") || !strings.Contains(out, "# fedavg-probe: ") {
		t.Fatalf("first run: exit %d\nstderr %s\nstdout %s", code, errs, out)
	}
	b, err := os.ReadFile(cache)
	if err != nil || !strings.Contains(string(b), `"bytes_per_worker"`) || !strings.Contains(string(b), `"gomaxprocs"`) || !strings.Contains(string(b), `"trials"`) {
		t.Fatalf("cache: %v\n%s", err, b)
	}
	if code, _, errs = microCLI(t, args...); code != ExitOK || !strings.Contains(errs, "revalidated") {
		t.Fatalf("second run: exit %d, stderr %s", code, errs)
	}
	if code, _, errs = microCLI(t, append(args, "--auto", "fallback")...); code != ExitOK || !strings.Contains(errs, "fallback model (8388608 bytes per worker") {
		t.Fatalf("fallback: exit %d, stderr %s", code, errs)
	}
	if code, _, errs = microCLI(t, append(args, "--auto", "guess")...); code != ExitUsage || !strings.Contains(errs, `auto "guess"`) {
		t.Fatalf("bad --auto: exit %d, stderr %s", code, errs)
	}
}

func TestMicroProbeShowsAndRefreshes(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "probe.json")
	code, out, errs := microCLI(t, "micro", "probe", "--machine-cache", cache, "--cpu", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"probe: ", "auto per shape: clients=32/dim=2048:", "| size | rounds | 1 worker(s) | 2 worker(s) |", "dim 8192: ", "history (newest last):"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("probe not cached: %v", err)
	}
	code, out, _ = microCLI(t, "micro", "probe", "--machine-cache", cache, "--cpu", "2")
	if code != ExitOK || !strings.Contains(out, "revalidated") {
		t.Errorf("second probe: exit %d, not revalidated from the cache:\n%s", code, out)
	}
	code, out, _ = microCLI(t, "micro", "probe", "--machine-cache", cache, "--cpu", "2", "--force")
	if code != ExitOK || !strings.Contains(out, "(--force)") {
		t.Errorf("--force: exit %d, not probed afresh:\n%s", code, out)
	}
	if code, _, errs := microCLI(t, "micro", "probe", "--cpu", "-1"); code != ExitUsage || !strings.Contains(errs, "--cpu -1") {
		t.Errorf("--cpu -1: exit %d, %q", code, errs)
	}
}
