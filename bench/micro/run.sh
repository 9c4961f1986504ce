#!/bin/sh
# Run the microbenchmark surfaces COUNT times, interleaved (one pass over
# every selected case per repetition, so a burst of load from elsewhere
# spreads over all cases instead of hitting one), then tabulate them.
#
#   bench/micro/run.sh [OUT_DIR]            default OUT_DIR: results/micro
#   COUNT=5 BENCHTIME=200ms SUITE=all FILTER='clients=512' bench/micro/run.sh
#
# Writes OUT_DIR/micro.txt (Go benchmark format: benchstat, sagebench
# compare/gate read it) and OUT_DIR/report.md (JSON vs zero-copy per dim,
# FedAvg vs the memory floor per shape, auto vs the best worker count).
set -eu
count=${COUNT:-5}
benchtime=${BENCHTIME:-200ms}
suite=${SUITE:-all}
filter=${FILTER:-.}
out=${1:-results/micro}

cd "$(dirname "$0")/../.."
mkdir -p "$out"
go build -o "$out/sagebench" ./cmd/sagebench
: >"$out/micro.txt"
i=1
while [ "$i" -le "$count" ]; do
	echo "pass $i/$count" >&2
	"$out/sagebench" micro "$suite" --count 1 --benchtime "$benchtime" --filter "$filter" >>"$out/micro.txt"
	i=$((i + 1))
done
"$out/sagebench" micro report "$out/micro.txt" >"$out/report.md"
cat "$out/report.md"
