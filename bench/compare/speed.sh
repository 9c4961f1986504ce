#!/bin/sh
# Speed of `sagebench compare`: reading and comparing two inputs of 10,000
# Go benchmark lines each (1,000 benchmarks x 10 runs x 3 units).
# Target: <= 1 s per comparison. Prints the benchmark lines and a median.
set -eu
cd "$(dirname "$0")/../.."
go test -run '^$' -bench 'Compare10kLines' -benchtime 3x -count "${COUNT:-5}" ./internal/stats/ |
	tee /dev/stderr | awk '/^BenchmarkCompare10kLines/ { v[n++] = $3 }
	END { if (n == 0) exit 1; asort(v); printf "median: %.3f s per comparison (n=%d)\n", v[int((n+1)/2)] / 1e9, n }'
