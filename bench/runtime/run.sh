#!/usr/bin/env bash
# Benchmarks of the in-process dataflow engine (internal/dataflow):
#   BenchmarkLocalThroughput  3 no-op stages, parallelism 2, one submitter,
#                             serialisation off and on; records/s and CPU per record
#   BenchmarkLocalHopLatency  same graph paced at 50,000 records/s on an absolute
#                             schedule; per-hop queueing latency p50/p99/p99.9
# Targets (issue 4): ≥ 500,000 records/s with serialisation off; hop p99 ≤ 100 µs.
#
# Usage: bench/runtime/run.sh [count] [outfile]
# Runs every benchmark `count` times (default 6), interleaved, and prints a
# benchstat summary (median and confidence interval) when benchstat builds.
# Timings depend on the machine being otherwise idle: check `uptime` first,
# and read cpu-ns/record, which is less sensitive to other load than records/s.
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-6}
out=${2:-$(mktemp -t runtime-bench.XXXXXX)}
: >"$out"
for i in $(seq "$count"); do
	go test -run '^$' -bench 'BenchmarkLocalThroughput' -benchtime 300000x -count 1 ./internal/dataflow/ | tee -a "$out" | grep '^Benchmark' >&2
	# 100,000 records at 50,000/s: two seconds per run.
	go test -run '^$' -bench 'BenchmarkLocalHopLatency' -benchtime 100000x -count 1 ./internal/dataflow/ | tee -a "$out" | grep '^Benchmark' >&2
done
echo "raw results: $out" >&2
bs=$(mktemp -t benchstat.XXXXXX)
if go build -o "$bs" golang.org/x/perf/cmd/benchstat 2>/dev/null; then
	"$bs" "$out"
fi
rm -f "$bs"
