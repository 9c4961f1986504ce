#!/bin/sh
# Speed of `sagebench compare`: reading and comparing two inputs of 10,000
# Go benchmark lines each (1,000 benchmarks x 10 runs x 3 units).
# Target: <= 1 s per comparison. Prints the benchmark lines and the median.
set -eu
cd "$(dirname "$0")/../.."
out=$(go test -run '^$' -bench 'Compare10kLines' -benchtime 3x -count "${COUNT:-5}" ./internal/stats/)
echo "$out"
echo "$out" | awk '/^BenchmarkCompare10kLines/ { print $3 }' | sort -n |
	awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; printf "median: %.3f s per comparison (n=%d)\n", v[int((NR+1)/2)] / 1e9, NR }'
