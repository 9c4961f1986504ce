#!/usr/bin/env bash
# Distributed load generation (internal/fleet, `sagebench run --nodes N`):
#   1. BenchmarkRecordReturn: the record return path alone — a node
#      publishing 10,000 streamed-chat records (~1.2 kB of JSON each) to the
#      run's JetStream stream while the coordinator reads, decodes and
#      deduplicates them; server, node and coordinator in one process.
#      Metric: records/s end to end.
#   2. Q4 quick at --nodes 1, 2 and 4 on the embedded stack (2 spawned worker
#      processes for 2, 4 for 4): the frontier per scale, each node's send
#      lag p50/p99 and how late its driver started, and its clock offset,
#      from the run's notes and requests.jsonl.
#
# Usage: bench/fleet/run.sh [count] [outdir]
# count (default 3) is the number of benchmark runs; outdir (default a
# temporary directory) holds the Q4 records. Everything shares this machine:
# check `uptime` first — on a busy machine every Q4 run is invalid by the
# 5 ms lag rule and the node counts compare the machine's load, not the
# driver.
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-3}
out=${2:-$(mktemp -d -t fleet-bench.XXXXXX)}
uptime
go test -run '^$' -bench 'BenchmarkRecordReturn' -benchtime 5x -count "$count" ./internal/fleet/ | grep '^Benchmark'
go build -o "$out/sagebench" ./cmd/sagebench
for n in 1 2 4; do
	uptime
	"$out/sagebench" run -e Q4 --quick --nodes "$n" --output-dir "$out/nodes$n" >"$out/nodes$n.txt" 2>&1 || true
	echo "== --nodes $n"
	grep -E '^\| [0-9]+ \||^schedule:|^valid:|load node' "$out/nodes$n.txt" || true
done
echo "records: $out" >&2
