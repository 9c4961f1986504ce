#!/bin/sh
# The poisoned-probe benchmark: probe the machine for FedAvg workers=auto
# while a synthetic CPU load holds every core (one busy loop per CPU), so
# that the cached probe is written under load, then stop the load and run
# the FedAvg matrix COUNT times, interleaved, with that cache. Every pass
# starts by revalidating the cached probe (docs/micro.md); the script
# prints what the loaded probe said, what each pass used, and the goal
# lines: auto ÷ best fixed count <= 1.05 on every shape.
#
#   bench/micro/poison.sh [OUT_DIR]         default OUT_DIR: results/micro-poison
#   COUNT=5 BENCHTIME=100ms LOAD_SECONDS=3 bench/micro/poison.sh
set -eu
count=${COUNT:-5}
benchtime=${BENCHTIME:-100ms}
out=${1:-results/micro-poison}

cd "$(dirname "$0")/../.."
mkdir -p "$out"
go build -o "$out/sagebench" ./cmd/sagebench
cache="$out/probe.json"
rm -f "$cache"
echo "# $(date -u +%FT%TZ); $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done' EXIT
for _ in $(seq "$(nproc)"); do
	sh -c 'while :; do :; done' &
	pids="$pids $!"
done
sleep 1
echo "## probe under load ($(nproc) busy loops)"
"$out/sagebench" micro probe --force --machine-cache "$cache" | sed -n '1,2p'
for p in $pids; do kill "$p" 2>/dev/null || true; done
pids=""
sleep "${LOAD_SECONDS:-3}" # let the machine settle
echo "## load stopped; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"

: >"$out/micro.txt"
i=1
while [ "$i" -le "$count" ]; do
	"$out/sagebench" micro fedavg --filter 'Aggregate/' --count 1 --benchtime "$benchtime" \
		--machine-cache "$cache" >>"$out/micro.txt" 2>>"$out/probe.log"
	echo "pass $i: $(tail -1 "$out/probe.log")"
	i=$((i + 1))
done
echo "## after: load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/sagebench" micro report --goals "$out/micro.txt" | tee "$out/goals.txt"
