package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
)

// invokeCLI runs Main in-process and returns the exit code and outputs.
func invokeCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func statsTestdata(name string) string { return filepath.Join("..", "stats", "testdata", name) }

func compareTempFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareCommand(t *testing.T) {
	base, cur := statsTestdata("sage-base.txt"), statsTestdata("sage-current.txt")
	garbage := compareTempFile(t, "garbage.txt", "\x00\x01\x02\xff\xfe\n\x7fELF\x02\x01\n")
	empty := compareTempFile(t, "empty.txt", "")
	withBad := compareTempFile(t, "bad.txt", "BenchmarkQ2ControlMix/backend=sage/policy=fifo 100 12000000 ns/op\nBenchmarkQ2ControlMix/backend=sage/policy=fifo 100 Inf ns/op\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"text", []string{"compare", base, cur}, ExitOK, "+8.57%", ""},
		{"markdown", []string{"compare", "--format", "markdown", base, cur}, ExitOK, "| **geomean** |", ""},
		{"json", []string{"compare", "--format", "json", base, cur}, ExitOK, `"delta": "+8.57%"`, ""},
		{"csv", []string{"compare", "--format", "csv", base, cur}, ExitOK, "config,unit,benchmark", ""},
		{"alpha", []string{"compare", "--alpha", "0.01", base, cur}, ExitOK, "~", ""},
		{"col bare key", []string{"compare", "--col", "format", statsTestdata("codec.txt")}, ExitOK, "zerocopy", ""},
		{"col file key", []string{"compare", "--col", "note", statsTestdata("units.txt")}, ExitOK, "before", ""},
		{"one input summarised alone", []string{"compare", base}, ExitOK, "benchmark                                    ../stats/testdata/sage-base.txt sec/op\n", ""},
		{"no input", []string{"compare"}, ExitUsage, "", "at least one input"},
		{"col with one dash", []string{"compare", "-col", "note", statsTestdata("units.txt")}, ExitOK, "before", ""},
		{"alpha with one dash and =", []string{"compare", "-alpha=0.0001", base, cur}, ExitOK, "~", ""},
		{"table projection", []string{"compare", "--table", "goarch", base, cur}, ExitOK, "goarch: amd64", ""},
		{"bad table projection", []string{"compare", "-table", "(", base, cur}, ExitUsage, "", "parsing table projection"},
		{"unknown flag", []string{"compare", "-colour", base, cur}, ExitUsage, "", "unknown shorthand flag"},
		{"help", []string{"compare", "--help"}, ExitOK, "benchstat's", ""},
		{"csv has the base geomean", []string{"compare", "--format", "csv", base, cur}, ExitOK, ",sec/op,geomean,../stats/testdata/sage-base.txt,,", ""},
		{"pytest JSON without stats.data, one sample", []string{"compare", ciFixture("pytest-nodata.json"), ciFixture("pytest-base.json")}, ExitOK, "(p=1.000 n=1+20)", ""},
		{"pytest JSON, one sample per round", []string{"compare", ciFixture("pytest-base.json"), ciFixture("pytest-slow.json")}, ExitOK, "+20.00%  (p=0.000 n=20)", ""},
		{"bad format", []string{"compare", "--format", "xml", base, cur}, ExitUsage, "", "--format"},
		{"bad alpha", []string{"compare", "--alpha", "3", base, cur}, ExitUsage, "", "alpha 3"},
		{"missing file", []string{"compare", base, "/nonexistent/x.txt"}, ExitUsage, "", "no such file"},
		{"empty file", []string{"compare", base, empty}, ExitUsage, "", "holds no benchmark results"},
		{"binary garbage", []string{"compare", base, garbage}, ExitUsage, "", "garbage.txt:1: unreadable line"},
		{"infinite value", []string{"compare", base, withBad}, ExitUsage, "", "bad.txt:2: Q2ControlMix/backend=sage/policy=fifo: value of ns/op is infinite"},
		{"run dir without run.json", []string{"compare", base, filepath.Dir(compareTempFile(t, "bench.txt", "BenchmarkX 1 1 ns/op\n"))}, ExitUsage, "", "has no run.json"},
		{"col matching nothing", []string{"compare", "--col", "nosuchkey", base, cur}, ExitUsage, "", "--col \"nosuchkey\" gives one column"},
		{"col projection matching nothing", []string{"compare", "--col", "/nosuchkey", statsTestdata("codec.txt")}, ExitUsage, "", "gives one column"},
		{"three inputs", []string{"compare", base, cur, cur}, ExitOK, "sage-current.txt#1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := invokeCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
		})
	}
}

func TestCompareSamePathTwice(t *testing.T) {
	base := statsTestdata("sage-base.txt")
	code, stdout, _ := invokeCLI(t, "compare", base, base)
	if code != ExitOK || !strings.Contains(stdout, base+"#1") || !strings.Contains(stdout, "~") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}

// TestCompareRefusesDifferentWorkloads: two run directories of one Q
// whose workload_hash differs (a quick run and a full one) are refused
// with exit 2, naming both hashes and the config keys that differ; gate
// on them is inconclusive, never a verdict.
func TestCompareRefusesDifferentWorkloads(t *testing.T) {
	dir := t.TempDir()
	write := func(name, hash, cfg string) string {
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o755)
		run := record.Run{SchemaVersion: record.SchemaVersion, RunID: name, Workload: "Q2", Name: "ControlMix", Backend: "sage",
			Complete: true, Valid: true, WorkloadHash: hash, RunConfig: json.RawMessage(cfg),
			Summary: record.Summary{Requests: 10, Succeeded: 10, Throughput: 5, E2E: record.Latency{Count: 10, P50: 10, P99: 20}}}
		if err := record.WriteJSONAtomic(filepath.Join(d, "run.json"), run); err != nil {
			t.Fatal(err)
		}
		return d
	}
	quick := write("quick", "aaaa1111", `{"quick":true,"q2":{"rounds":1},"backend":"sage"}`)
	full := write("full", "bbbb2222", `{"quick":false,"q2":{"rounds":2},"backend":"sage"}`)
	code, _, stderr := runCLI(t, context.Background(), "compare", quick, full)
	for _, want := range []string{"workload_hash aaaa1111", "workload_hash bbbb2222", "quick: true ≠ false", "q2.rounds: 1 ≠ 2"} {
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q: want 2 and %q", code, stderr, want)
		}
	}
	code, stdout, _ := runCLI(t, context.Background(), "gate", quick, full)
	if code != ExitInconclusive || !strings.Contains(stdout, "ran different workloads") {
		t.Errorf("gate exit %d:\n%s", code, stdout)
	}
}

// compareRunDir writes a run directory of workload q under dir/name.
func compareRunDir(t *testing.T, dir, name, q string, valid bool, p50 float64) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	run := record.Run{SchemaVersion: record.SchemaVersion, RunID: name, Workload: q, Name: "X", Backend: "sage",
		Complete: true, Valid: valid, WorkloadHash: "h" + q,
		Summary: record.Summary{Requests: 10, Succeeded: 10, Throughput: 5, E2E: record.Latency{Count: 10, P50: p50, P99: 2 * p50}}}
	if !valid {
		run.InvalidReasons = []string{"delivered rate 60% of target"}
	}
	if err := record.WriteJSONAtomic(filepath.Join(d, "run.json"), run); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCompareRefusesDifferentQs: a Q1 run against a Q2 run is refused
// with exit 2, naming both.
func TestCompareRefusesDifferentQs(t *testing.T) {
	dir := t.TempDir()
	q1, q2 := compareRunDir(t, dir, "a", "Q1", true, 10), compareRunDir(t, dir, "b", "Q2", true, 10)
	code, _, stderr := invokeCLI(t, "compare", q1, q2)
	if code != ExitUsage || !strings.Contains(stderr, "runs of different workloads: Q1") || !strings.Contains(stderr, "and Q2") {
		t.Errorf("exit %d, stderr %q: want 2 naming Q1 and Q2", code, stderr)
	}
}

// TestCompareLeavesInvalidRunsOut: an invalid run in a tree of runs is
// left out of its column with a note, as gate does, not pooled.
func TestCompareLeavesInvalidRunsOut(t *testing.T) {
	base, cur := t.TempDir(), t.TempDir()
	compareRunDir(t, base, "b1", "Q2", true, 10)
	compareRunDir(t, cur, "c1", "Q2", true, 12)
	compareRunDir(t, cur, "c2", "Q2", false, 900)
	code, stdout, stderr := invokeCLI(t, "compare", base, cur)
	if code != ExitOK || !strings.Contains(stderr, "run c2") || !strings.Contains(stderr, "left out: invalid or incomplete (delivered rate 60% of target)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "24.00") || strings.Contains(stdout, "1800") || strings.Contains(stdout, "n=1+2") {
		t.Errorf("the invalid run's 900 ms entered the comparison:\n%s", stdout)
	}
}
