package gate_test

import (
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/gate"
)

// With alpha 0.01 the Mann-Whitney U test needs five samples per side:
// four can never produce a p-value below 0.0286.
func ExampleMinSamples() {
	fmt.Println(gate.MinSamples(0.01), gate.MinSamples(0.05))
	fmt.Printf("%.4f\n", gate.MinAttainableP(4, 4))
	// Output:
	// 5 4
	// 0.0286
}

// A repository's first change has no baseline: the absolute limits judge
// it alone, and the trend rule is skipped with a note.
func ExampleEvaluateCurrent() {
	cur, _ := benchset.ReadPytest(strings.NewReader(`{"benchmarks":[
{"name":"test_verify_proof","stats":{"mean":0.0009,"rounds":5,"data":[0.0008,0.0008,0.0009,0.0009,0.0011]}}]}`), "benchmark-results.json", "current")
	p := gate.Default()
	p.Limits = []gate.Limit{{Benchmark: "test_verify_proof", MaxMeanMs: 1, MaxP99Ms: 1.5}}
	out, _ := gate.EvaluateCurrent(cur, p)
	for _, f := range out.Sorted() {
		fmt.Println(f)
	}
	fmt.Println(out.Verdict)
	// Output:
	// NOTE         geomean      sec/op: not evaluated: one input, so only the absolute rules (limits, expect) judge it
	// PASS         limit-mean   test_verify_proof: 0.9 ms <= limit 1 ms (pytest-benchmark stats.mean, rounds=5)
	// PASS         limit-p99    test_verify_proof: 1.1 ms <= limit 1.5 ms (pytest-benchmark stats.data, n=5)
	// NOTE         trend-mean   all: not evaluated: no baseline (trend.missing_baseline: skip)
	// NOTE         trend-p99    all: not evaluated: no baseline (trend.missing_baseline: skip)
	// pass
}
