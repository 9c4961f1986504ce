#!/bin/sh
# Benchmarks of the simulated engines and the vector index (issue 2, items 4-7):
#   sim   BenchmarkFidelity          wall-clock TTFT/ITL medians of lone requests
#                                    vs the profile's model (target: within 5 %)
#         BenchmarkThroughput        1000 concurrent 64-token streams on one engine:
#                                    H100 timing (model/measured ~ 1) and 20 us steps
#                                    (the event loop is the bottleneck)
#         BenchmarkStreamMemory      heap + stacks per in-flight stream, N=2000
#                                    (budget: 64 KiB)
#         BenchmarkEmbedderBatching  64 concurrent one-input calls to the CPU embedder
#         BenchmarkEmbedderLone      lone calls vs max_wait + batch time (and the host's
#                                    own timer overshoot, the floor of every figure)
#   index BenchmarkBuild/Search      5000 docs x 384 dims; recall@10 vs exact search
#         BenchmarkCoderHNSW         github.com/coder/hnsw v0.6.1 on the same corpus
#
#   bench/sim/run.sh [OUT_DIR]          default OUT_DIR: results/sim
#   COUNT=3 FIDELITY_N=20 bench/sim/run.sh
#
# Writes OUT_DIR/sim.txt (Go benchmark format; benchstat and `sagebench
# compare` read it) and prints one line per figure. Interleaves repetitions
# so a burst of load from elsewhere spreads over every case.
set -eu
count=${COUNT:-3}
fidelity_n=${FIDELITY_N:-20}
out=${1:-results/sim}

cd "$(dirname "$0")/../.."
mkdir -p "$out"
: >"$out/sim.txt"
i=1
while [ "$i" -le "$count" ]; do
	echo "pass $i/$count" >&2
	go test -run '^$' -bench 'Fidelity' -benchtime "${fidelity_n}x" ./internal/stack/sim/ >>"$out/sim.txt"
	go test -run '^$' -bench 'Throughput|StreamMemory' -benchtime 1x ./internal/stack/sim/ >>"$out/sim.txt"
	go test -run '^$' -bench 'EmbedderBatching|EmbedderLone' -benchtime 20x ./internal/stack/sim/ >>"$out/sim.txt"
	go test -run '^$' -bench 'Build' -benchtime 1x ./internal/stack/index/ >>"$out/sim.txt"
	go test -run '^$' -bench 'Search|CoderHNSW' -benchtime 200x ./internal/stack/index/ >>"$out/sim.txt"
	i=$((i + 1))
done

# One line per benchmark and metric: the median over the repetitions.
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (f = 3; f < NF; f += 2) {
		key = name "  " $(f + 1)
		vals[key] = vals[key] " " $f
		if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	}
}
END {
	for (k = 1; k <= n; k++) {
		key = order[k]; m = split(substr(vals[key], 2), v, " ")
		for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] + 0 < v[a] + 0) { t = v[a]; v[a] = v[b]; v[b] = t }
		printf "%-62s %14s  (n=%d)\n", key, v[int((m + 1) / 2)], m
	}
}' "$out/sim.txt" | grep -v -E '^Benchmark(Fidelity|Throughput|StreamMemory|Embedder|Build)[^ ]* +ns/op' | tee "$out/summary.txt"
