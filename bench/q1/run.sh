#!/bin/sh
# Q1 quick against the embedded stack: how much of a transaction's E2E is the
# runtime's own overhead (queueing inside the runtime + operator time outside
# the HTTP calls + the hop to the sink), per --parallelism.
#
#   bench/q1/run.sh [OUT_DIR]              default OUT_DIR: results/bench-q1
#   COUNT=5 PARS="2 8 16" bench/q1/run.sh
#
# Builds sagebench once, then runs `run -e Q1 --quick` COUNT times for each
# parallelism in PARS, interleaved (so a burst of load from elsewhere spreads
# over every case), and prints each run's runtime_overhead_share (target:
# <= 1 % of the E2E p50) with its parts and the medians per parallelism.
# Runs whose schedule lag made them invalid are still measured: the overhead
# is computed per transaction from the runtime's hop times, not from the lag.
set -eu
count=${COUNT:-3}
pars=${PARS:-"2 16"}
out=${1:-results/bench-q1}

cd "$(dirname "$0")/../.."
mkdir -p "$out"
bin="$out/sagebench"
go build -o "$bin" ./cmd/sagebench
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >&2
i=1
while [ "$i" -le "$count" ]; do
	for p in $pars; do
		echo "pass $i/$count: --parallelism $p" >&2
		# exit 5 (invalid: schedule lag on a loaded machine) is expected and kept
		"$bin" run -e Q1 --quick --parallelism "$p" --output-dir "$out/p$p" >/dev/null 2>&1 || [ $? -eq 5 ]
	done
	i=$((i + 1))
done
go run ./bench/q1 "$out"/p*/q1/q1-sage-*
