package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// ciFixture is a file of testdata/ci: the CI contract's inputs
// (pytest-benchmark JSON with and without stats.data, Mohawk-named Go
// benchmark output, policies).
func ciFixture(name string) string { return filepath.Join("testdata", "ci", name) }

// TestGateContract drives each row of the CI contract through Main.
func TestGateContract(t *testing.T) {
	f := ciFixture
	missing := filepath.Join(t.TempDir(), "no-cached-baseline.txt")
	tests := []struct {
		name    string
		args    []string
		code    int
		want    []string
		notWant []string
	}{
		// pytest-benchmark JSON input.
		{"pytest same", []string{"gate", f("pytest-base.json"), f("pytest-same.json")}, ExitOK,
			[]string{"PASS         trend-mean   all: 2 benchmarks", "PASS         trend-p99    all: 2 benchmarks", "verdict: pass"}, nil},
		{"pytest mean and p99 trend", []string{"gate", f("pytest-base.json"), f("pytest-slow.json")}, ExitRegression,
			[]string{"REGRESSION   trend-mean   test_aggregate[512]: 4.076 ms -> 4.891 ms (+20.0%", "pytest-benchmark stats.mean, rounds=20",
				"REGRESSION   trend-p99    test_verify_proof: 0.8304 ms -> 2.491 ms", "pytest-benchmark stats.data, n=20"}, nil},
		{"pytest limits alone", []string{"gate", "--policy", f("sdk-policy.yaml"), f("pytest-same.json")}, ExitOK,
			[]string{"PASS         limit-p99    test_aggregate[512]", "PASS         limit-mean   test_verify_proof", "NOTE         trend-mean   all: not evaluated: no baseline"}, []string{"PASS         trend"}},
		{"pytest limits on exact parametrized names", []string{"gate", "--policy", f("sdk-exact.yaml"), f("pytest-same.json")}, ExitOK,
			[]string{"PASS         expect       test_aggregate[512]", "PASS         limit-p99    test_aggregate[512]", "PASS         limit-mean   test_verify_proof"}, []string{"matches no benchmark"}},
		{"pytest exact limit fires", []string{"gate", "--policy", f("sdk-exact.yaml"), f("pytest-slow.json")}, ExitRegression,
			[]string{"REGRESSION   limit-mean   test_aggregate[512]: 4.891 ms > limit 4.5 ms"}, nil},
		{"pytest limit fires alone", []string{"gate", "--policy", f("sdk-policy.yaml"), f("pytest-slow.json")}, ExitRegression,
			[]string{"REGRESSION   limit-mean   test_aggregate[512]: 4.891 ms > limit 4.5 ms", "REGRESSION   limit-p99    test_verify_proof: 2.491 ms > limit 1.5 ms"}, nil},
		{"pytest p99 without data is not evaluable", []string{"gate", "--policy", f("sdk-policy.yaml"), f("pytest-nodata.json")}, ExitInconclusive,
			[]string{"INCONCLUSIVE limit-p99    test_aggregate[512]: limit 6 ms not evaluable", "--benchmark-save-data", "PASS         limit-mean   test_aggregate[512]"}, nil},
		{"pytest p99 trend without data", []string{"gate", f("pytest-nodata.json"), f("pytest-base.json")}, ExitInconclusive,
			[]string{"INCONCLUSIVE trend-p99    test_aggregate[512]: baseline not evaluable"}, []string{"PASS         trend-p99"}},
		// Absolute limits without a baseline; the no-baseline PR.
		{"first PR: expect and limits alone", []string{"gate", "--policy", f("mohawk-limits.yaml"), "--expect", "BenchmarkAggregateParallel/", f("mohawk-same.txt")}, ExitOK,
			[]string{"PASS         expect       BenchmarkAggregateParallel/: present in current",
				"PASS         limit-mean   AggregateParallel/clients512_dim8192/workersAuto-2: 5.", "PASS         limit-mean   AggregateParallel/clients128_dim4096/workersAuto-2",
				"NOTE         geomean      sec/op: not evaluated: one input", "NOTE         trend-p99    all: not evaluated: no baseline (trend.missing_baseline: skip)"}, nil},
		{"first PR: limit fires alone", []string{"gate", "--policy", f("mohawk-limits.yaml"), f("mohawk-slow.txt")}, ExitRegression,
			[]string{"REGRESSION   limit-mean   AggregateParallel/clients512_dim8192/workersAuto-2: 5.928 ms > limit 5.5 ms"}, nil},
		{"limit on a prefix", []string{"gate", "--policy", f("mohawk-prefix-limit.yaml"), f("mohawk-slow.txt")}, ExitRegression,
			[]string{"REGRESSION   limit-mean   AggregateParallel/clients512_dim8192/workers2-2: 5.928 ms > limit 5.5 ms", "PASS         limit-mean   AggregateParallel/clients16_dim1024/workers1-2"}, nil},
		{"notes in JSON are notes", []string{"gate", "--format", "json", "--policy", f("mohawk-limits.yaml"), f("mohawk-same.txt")}, ExitOK,
			[]string{`"verdict": "note",
      "note": true,
      "rule": "trend-mean"`}, []string{`"verdict": "pass",
      "note": true`}},
		{"missing_baseline fail", []string{"gate", "--policy", f("trend-fail.yaml"), f("mohawk-same.txt")}, ExitInconclusive,
			[]string{"INCONCLUSIVE trend-mean   all: no baseline to compare with (trend.missing_baseline: fail)"}, nil},
		{"cached baseline missing: geomean fail-closed, trend skipped", []string{"gate", missing, f("mohawk-same.txt")}, ExitInconclusive,
			[]string{"INCONCLUSIVE geomean      sec/op: no baseline", "NOTE         trend-mean   all: not evaluated: no baseline"}, nil},
		{"cached baseline missing: a limit still fires", []string{"gate", "--policy", f("mohawk-limits.yaml"), missing, f("mohawk-slow.txt")}, ExitRegression,
			[]string{"REGRESSION   limit-mean", "INCONCLUSIVE geomean"}, nil},
		// The trend rule can fire on a fast benchmark.
		{"trend on 100 ns", []string{"gate", "--policy", f("loose-geomean.yaml"), f("tiny-base.txt"), f("tiny-slow.txt")}, ExitRegression,
			[]string{"REGRESSION   trend-mean   EncodeSmall-2:", "99.95ns -> 113.68ns (+13.7%", "NOTE         change       EncodeSmall-2 sec/op: significantly worse, +13.74% (median 99.95n -> 113.68n",
				"PASS         geomean      geomean sec/op (github.com/rwilliamspbg-ops/Sovereign-Mohawk-Proto/internal/codec): medians +6.65% over 2 benchmarks (the table's geomean)",
				"geomean        100.2n       106.9n          +6.65%"}, nil},
		// Verdict hygiene.
		{"no p99 in Go benchmarks is a note", []string{"gate", f("mohawk-base.txt"), f("mohawk-same.txt")}, ExitOK,
			[]string{"NOTE         trend-p99    all: not evaluated: no benchmark has this statistic on both sides"}, []string{"PASS         trend-p99"}},
		{"identical exact values pass", []string{"gate", f("exact.txt"), f("exact-same.txt")}, ExitOK, []string{"verdict: pass"}, []string{"frames: significant"}},
		// Names as the contract writes them.
		{"expect prefix missing", []string{"gate", "--expect", "BenchmarkAggregateSerial/", f("mohawk-base.txt"), f("mohawk-same.txt")}, ExitInconclusive,
			[]string{"INCONCLUSIVE expect       BenchmarkAggregateSerial/: expected benchmark missing in the baseline and in current"}, nil},
		{"expect full name with -N", []string{"gate", "--expect", "BenchmarkAggregateParallel/clients16_dim1024/workers1-2", f("mohawk-base.txt"), f("mohawk-same.txt")}, ExitOK,
			[]string{"PASS         expect       BenchmarkAggregateParallel/clients16_dim1024/workers1-2: present on both sides"}, nil},
		{"cached Mohawk baseline against a sagebench run", []string{"gate", "--policy", f("mohawk-ignore.yaml"), "--expect", "BenchmarkAggregateParallel/", f("mohawk-base.txt"), f("sagebench-mohawk-names.txt")}, ExitOK,
			[]string{"PASS         expect       BenchmarkAggregateParallel/: present on both sides", "verdict: pass"}, []string{"coverage"}},
		{"without ignore the machines' lines split the tables", []string{"gate", f("mohawk-base.txt"), f("sagebench-mohawk-names.txt")}, ExitInconclusive,
			[]string{"INCONCLUSIVE coverage", "keys that differ only by machine can be set under ignore"}, nil},
		{"expect full name without -N", []string{"gate", "--expect", "BenchmarkAggregateParallel/clients16_dim1024/workers1", f("mohawk-base.txt"), f("mohawk-same.txt")}, ExitOK,
			[]string{"present on both sides"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := invokeCLI(t, tc.args...)
			ok := code == tc.code
			for _, w := range tc.want {
				ok = ok && strings.Contains(stdout, w)
			}
			for _, w := range tc.notWant {
				ok = ok && !strings.Contains(stdout, w)
			}
			if !ok {
				t.Fatalf("exit %d (want %d), want %q, not %q\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, tc.notWant, stdout, stderr)
			}
		})
	}
}

// TestGateInvalidRunsNeverRegress: two invalid runs whose p99 grew 40-fold
// are inconclusive evidence, not a regression.
func TestGateInvalidRunsNeverRegress(t *testing.T) {
	root := t.TempDir()
	flat, tail := make([]float64, 100), make([]float64, 100)
	for i := range flat {
		flat[i], tail[i] = 10, 10
	}
	for i := 95; i < 100; i++ {
		tail[i] = 400
	}
	base := gateRunDir(t, filepath.Join(root, "base", "a"), "q2-sage-0-aaaaaaaa", false, 1e7, flat)
	cur := gateRunDir(t, filepath.Join(root, "cur", "b"), "q2-sage-0-bbbbbbbb", false, 1e7, tail)
	code, stdout, _ := invokeCLI(t, "gate", "--alpha", "0.05", base, cur)
	if code != ExitInconclusive || !strings.Contains(stdout, "INCONCLUSIVE trend-p99    Q2ControlMix/backend=sage: would be a regression, but a run on either side is invalid or incomplete: 10 ms -> 400 ms") ||
		strings.Contains(stdout, "REGRESSION") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}
