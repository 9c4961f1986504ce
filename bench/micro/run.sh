#!/bin/sh
# Run the microbenchmark surfaces COUNT times, interleaved (one pass over
# every selected case per repetition, so a burst of load from elsewhere
# spreads over all cases instead of hitting one), then tabulate them and
# print the FedAvg goal ratios with PASS/FAIL (auto ÷ best fixed count
# <= 1.05 on every shape, as the count auto chose ÷ the best per shape and
# auto ÷ its count in the same pass over all shapes; best ÷ memory floor
# <= 1.20 at 512×8192 and 256×8192, wall and CPU time), with the date and the load average before
# and after. Speed goals need a quiet machine (load average well below 1).
#
#   bench/micro/run.sh [OUT_DIR]            default OUT_DIR: results/micro
#   COUNT=5 BENCHTIME=200ms SUITE=all FILTER='clients=512' bench/micro/run.sh
#   CACHE=/tmp/probe.json bench/micro/run.sh    # another probe cache (default: the user's)
#
# Writes OUT_DIR/micro.txt (Go benchmark format: benchstat, sagebench
# compare/gate read it), OUT_DIR/report.md (JSON vs zero-copy per dim,
# FedAvg vs the memory floor per shape, auto vs the best worker count) and
# OUT_DIR/goals.txt.
set -eu
count=${COUNT:-5}
benchtime=${BENCHTIME:-200ms}
suite=${SUITE:-all}
filter=${FILTER:-.}
out=${1:-results/micro}
cache=${CACHE:+--machine-cache $CACHE}

cd "$(dirname "$0")/../.."
mkdir -p "$out"
go build -o "$out/sagebench" ./cmd/sagebench
before="$(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$out/micro.txt"
i=1
while [ "$i" -le "$count" ]; do
	echo "pass $i/$count" >&2
	# shellcheck disable=SC2086
	"$out/sagebench" micro "$suite" --count 1 --benchtime "$benchtime" --filter "$filter" $cache >>"$out/micro.txt"
	i=$((i + 1))
done
after="$(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/sagebench" micro report "$out/micro.txt" >"$out/report.md"
cat "$out/report.md"
if grep -q '^BenchmarkAggregate/' "$out/micro.txt"; then
	{
		echo "# FedAvg goals, medians of $count interleaved passes; $(nproc) CPUs"
		echo "# before: $before"
		echo "# after:  $after"
		"$out/sagebench" micro report --goals "$out/micro.txt"
	} | tee "$out/goals.txt"
fi
