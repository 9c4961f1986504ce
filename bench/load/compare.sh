#!/usr/bin/env bash
# Side-by-side: the sagebench load driver vs vegeta, against one loopback
# no-op server, in one go. Usage: bench/load/compare.sh [sweep-seconds]
#   1. 5,000 req/s for 10 s, both tools (delivered %, schedule-lag p50/p99/max)
#   2. a rate sweep (default 3 s per step), alternating the tools, to find the
#      highest rate each sustains with lag p99 <= 5 ms and delivered >= 99 %.
# Prints JSON lines and a final table. Everything binds 127.0.0.1.
# The load average is printed first: on a shared machine it decides the
# numbers more than either tool does; compare only rows of the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
STEP=${1:-3}
REPS=${REPS:-1}   # sweep repetitions (interleaved); the table shows medians
RATES=${RATES:-"1000 2000 3000 5000 7500 10000 15000 20000 30000"}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
TMP=$(mktemp -d "${TMPDIR:-/tmp}/loadbench-compare.XXXXXX")
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

VEGETA=$(command -v vegeta || echo "$(go env GOPATH)/bin/vegeta")
if [ ! -x "$VEGETA" ]; then
  echo "# installing vegeta: go install github.com/tsenart/vegeta/v12@latest" >&2
  if ! go install github.com/tsenart/vegeta/v12@latest; then
    echo "# vegeta could not be installed; running sagebench only" >&2
    VEGETA=""
  fi
fi

go build -o "$TMP/loadbench" ./bench/load
"$TMP/loadbench" serve -addr-file "$TMP/addr" -max 20m &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$TMP/addr" ] && break; sleep 0.1; done
URL="http://$(cat "$TMP/addr")/"
echo "# no-op server at $URL; $(nproc) cores; open files $(ulimit -n); load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

ours() { "$TMP/loadbench" drive -url "$URL" -rate "$1" -duration "${2}s" "${@:3}" | tee -a "$TMP/all.jsonl"; }
theirs() {
  [ -z "$VEGETA" ] && return 0
  echo "GET $URL" | "$VEGETA" attack -rate "$1" -duration "${2}s" -keepalive=true > "$TMP/v.bin"
  "$VEGETA" encode --to json < "$TMP/v.bin" | "$TMP/loadbench" vegeta-lag -rate "$1" -duration "${2}s" | tee -a "$TMP/all.jsonl"
}

echo "## 5000 req/s for 10 s (plus the driver's variants: goroutine per request, busy-wait pacer)" >&2
ours 5000 10
theirs 5000 10
ours 5000 10 -spawn
ours 5000 10 -busy

echo "## sweep, ${STEP}s per step, $REPS repetition(s)" >&2
for _ in $(seq "$REPS"); do
  for r in $RATES; do
    ours "$r" "$STEP"
    theirs "$r" "$STEP"
  done
done

echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "## highest sustained rate (lag p99 <= 5000 us and delivered >= 99 %), per tool" >&2
python3 - "$TMP/all.jsonl" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault((r["tool"], r["rate"]), []).append(r)
print("%-16s %7s %4s %9s %10s %10s %10s" % ("tool", "rate", "n", "deliv%", "p50us", "p99us", "maxus"))
best = {}
for (tool, rate), g in groups.items():
    med = lambda k: st.median(x[k] for x in g)
    print("%-16s %7.0f %4d %9.2f %10.0f %10.0f %10.0f" % (tool, rate, len(g), med("delivered_pct"), med("lag_p50_us"), med("lag_p99_us"), med("lag_max_us")))
    if med("lag_p99_us") <= 5000 and med("delivered_pct") >= 99:
        best[tool] = max(best.get(tool, 0), rate)
for t in sorted({k[0] for k in groups}):
    print("max sustained (median lag p99 <= 5 ms, delivered >= 99 %%): %s %s" % (t, best.get(t, "none")))
if best.get("sagebench") and best.get("vegeta"):
    print("ratio sagebench/vegeta: %.2f" % (best["sagebench"] / best["vegeta"]))
PY
