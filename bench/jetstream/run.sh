#!/usr/bin/env bash
# Benchmark of the JetStream dataflow engine (internal/dataflow/jetstream) on an
# embedded NATS server in the same process:
#   BenchmarkJetStreamNoop/saturated      3 no-op stages, parallelism 4, prefetch 64,
#                                         16 submitters as fast as the graph accepts;
#                                         end-to-end records/s and CPU per record
#   BenchmarkJetStreamNoop/one-submitter  same with one submitter
#   BenchmarkJetStreamNoop/paced-2k       paced at 2,000 records/s, parallelism 2;
#                                         per-hop latency (Started - Enqueued) p50/p99
#   BenchmarkJetStreamNoop/paced-10k      paced at 10,000 records/s, parallelism 4
# Targets (issue 14): ≥ 10,000 records/s end to end; hop p50 ≤ 2 ms.
#
# Usage: bench/jetstream/run.sh [count] [outfile]
# Runs each benchmark `count` times (default 5), interleaved, and prints a
# benchstat summary when benchstat builds. The server and the workers share
# the machine: check `uptime` first; cpu-ns/record (process CPU, server
# included) is the figure least sensitive to other load.
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-5}
out=${2:-$(mktemp -t jetstream-bench.XXXXXX)}
: >"$out"
for i in $(seq "$count"); do
	go test -run '^$' -bench 'BenchmarkJetStreamNoop' -benchtime 40000x -count 1 ./internal/dataflow/jetstream/ | tee -a "$out" | grep '^Benchmark' >&2
done
echo "raw results: $out" >&2
bs=$(mktemp -t benchstat.XXXXXX)
if go build -o "$bs" golang.org/x/perf/cmd/benchstat 2>/dev/null; then
	"$bs" "$out"
fi
rm -f "$bs"
