// Package benchset reads the inputs of compare and gate into one model: a
// Set of Go benchmark results (golang.org/x/perf/benchfmt) plus the evidence
// around them — run validity, per-request latencies and every problem met
// while reading.
//
// Four kinds of input are read:
//
//	Go benchmark text   go test -bench output, bench.txt (benchfmt; keys come
//	                    from /key=value sub-benchmark names via benchproc)
//	run directories     OUT/<q>/<run-id>/ with run.json, requests.jsonl and
//	                    bench.txt, or any tree of them
//	unified rows        unified_results.jsonl, one row per run
//	pytest-benchmark    benchmark-results.json (*.json): one sample per round
//	                    from stats.data, its mean and rounds in Summaries
//
// The pipeline is: bytes → line screening (binary garbage, FAIL and panic
// lines) → benchfmt parsing → value checks (NaN, ±Inf, negative) → Set.
// Nothing unreadable is skipped silently: each such line becomes a Problem
// naming its file and line, and callers that decide (the gate) treat any
// Problem as missing evidence.
package benchset
