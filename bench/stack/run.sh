#!/usr/bin/env bash
# Speed figures of the reference stack (docs/serve.md):
#   1. streams:  one `sagebench serve` process, 1,000 concurrent streaming
#                completions from a load client on the same machine:
#                streamed tokens/s and server memory per in-flight stream.
#   2. overhead: embedding requests at RATE/s on each of two paths, side by
#                side: an engine process called directly, and a gateway
#                process in front of that same engine. Added p50/p99.
# Usage: bench/stack/run.sh [STREAMS] [SECONDS] [RATE]   (defaults 1000 10 2000)
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

go build -o "$tmp/sagebench" ./cmd/sagebench
go build -o "$tmp/stackload" ./bench/stack

# start NAME ARGS...: runs sagebench in the background (its pid kept for
# cleanup; not in a subshell) and sets $url to its listening URL.
start() {
	local name=$1
	shift
	"$tmp/sagebench" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	pids+=($!)
	for _ in $(seq 100); do
		if grep -q 'listening on' "$tmp/$name.out" 2>/dev/null; then
			url=$(sed -n 's/^sagebench serve: listening on //p' "$tmp/$name.out")
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
start streams serve --listen 127.0.0.1:0 --config bench/stack/streams.yaml
"$tmp/stackload" streams -url "$url" -c "$streams" -d "${secs}s" -max-tokens 64

start engine serve engine --profile bge-large-gpu --listen 127.0.0.1:0
engine=$url
cat >"$tmp/gateway.yaml" <<YAML
engines:
  - {id: emb, kind: embedding, url: "$engine", model: BAAI/bge-large-en-v1.5, slots: 256}
index: {size: 0}
YAML
start gateway serve --listen 127.0.0.1:0 --config "$tmp/gateway.yaml"
"$tmp/stackload" overhead -direct "$engine" -gateway "$url" -rate "$rate" -d "${secs}s"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
