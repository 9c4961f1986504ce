#!/usr/bin/env bash
# Speed figures of the reference stack (docs/serve.md):
#   1. streams:  one `sagebench serve` process, 1,000 concurrent streaming
#                completions from a load client on the same machine:
#                streamed tokens/s, server CPU per token and server memory
#                per in-flight stream.
#   2. overhead: embedding requests at RATE/s in total, rotating between
#                three paths side by side: an engine process called
#                directly, a gateway process in front of that same engine,
#                and a trivial Go reverse proxy in front of it (the floor of
#                one more loopback HTTP hop). Added p50/p99 of each, and the
#                CPU each process spent per request it served.
# Usage: bench/stack/run.sh [STREAMS] [SECONDS] [RATE]   (defaults 1000 10 2000)
# SAGEBENCH=path runs that binary instead of building one (bench/stack/ab.sh
# compares two builds this way).
set -euo pipefail
cd "$(dirname "$0")/../.."
streams=${1:-1000}
secs=${2:-10}
rate=${3:-2000}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

bin=${SAGEBENCH:-}
if [ -z "$bin" ]; then
	bin=$tmp/sagebench
	go build -o "$bin" ./cmd/sagebench
fi
go build -o "$tmp/stackload" ./bench/stack

# start NAME CMD ARGS...: runs CMD in the background (its pid kept for
# cleanup in $pid; not in a subshell) and sets $url to its listening URL.
start() {
	local name=$1
	shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	pid=$!
	pids+=($pid)
	for _ in $(seq 100); do
		if grep -q 'listening on' "$tmp/$name.out" 2>/dev/null; then
			url=$(sed -n 's/^.*: listening on //p' "$tmp/$name.out")
			return
		fi
		sleep 0.1
	done
	echo "$name did not start:" >&2
	cat "$tmp/$name.err" >&2
	exit 1
}

echo "# $(go version) on $(nproc) cores, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
ulimit -n 65536 2>/dev/null || true
start streams "$bin" serve --listen 127.0.0.1:0 --config bench/stack/streams.yaml
"$tmp/stackload" streams -url "$url" -c "$streams" -d "${secs}s" -max-tokens 64 -pid "$pid"

start engine "$bin" serve engine --profile bge-large-gpu --listen 127.0.0.1:0
engine=$url
epid=$pid
cat >"$tmp/gateway.yaml" <<YAML
engines:
  - {id: emb, kind: embedding, url: "$engine", model: BAAI/bge-large-en-v1.5, slots: 256}
index: {size: 0}
YAML
start gateway "$bin" serve --listen 127.0.0.1:0 --config "$tmp/gateway.yaml"
gateway=$url
gpid=$pid
start proxy "$tmp/stackload" proxy -to "$engine"
"$tmp/stackload" overhead -direct "$engine" -gateway "$gateway" -proxy "$url" -rate "$rate" -d "${secs}s" \
	-cpu "engine=$epid,gateway=$gpid,proxy=$pid"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
