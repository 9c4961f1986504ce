#!/usr/bin/env bash
# The path users run, side by side: `sagebench run` (the binary, with the
# flags a user types), the bare driver (internal/load with net/http) and
# vegeta, against one instant-answer OpenAI server on loopback, each
# sending the same POST /v1/embeddings at a constant rate for DUR seconds.
# Tools are interleaved and their order rotated every repetition; the load
# average is printed before and after. Everything binds 127.0.0.1.
#
#   bench/load/compare.sh                      # RATES="5000 10000", REPS=3, DUR=5
#   RATES="2000 5000 8000 10000 12000" REPS=3 bench/load/compare.sh
#   PACER=precise RATES=5000 bench/load/compare.sh   # sagebench run --pacer precise
#   BASE_BIN=/tmp/sagebench-old bench/load/compare.sh # adds that build as "sagebench-base", interleaved
#   BINS="a=/tmp/sb-a b=/tmp/sb-b" bench/load/compare.sh  # more builds, as "sagebench-a", "sagebench-b"
#
# Per run it prints one JSON line (tool, rate, delivered %, schedule-lag
# p50/p99/max in µs, cpu_s and CPU µs per request); at the end a table of
# medians, the highest rate each tool sustains (lag p99 ≤ 5 ms and
# delivered ≥ 99 %) and the driver's goals with PASS/FAIL (issues 29 and
# 39) for every sagebench build: at 5,000 req/s schedule-lag p99 ≤ 1.0 ms
# and CPU per request ≤ 1.10× vegeta's in the same run; at 8,000 req/s CPU
# ≤ 1.20× vegeta's; at 10,000 req/s ≥ 99.9 % delivered and lag p99 ≤ 2 ms.
# Speed goals need a quiet machine: the date and the load average are
# printed before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATES=${RATES:-"5000 10000"}
REPS=${REPS:-3}
DUR=${DUR:-5}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
TMP=$(mktemp -d "${TMPDIR:-/tmp}/loadbench-compare.XXXXXX")
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

VEGETA=$(command -v vegeta || echo "$(go env GOPATH)/bin/vegeta")
if [ ! -x "$VEGETA" ]; then
  echo "# installing vegeta: go install github.com/tsenart/vegeta/v12@latest" >&2
  (cd "$TMP" && GOFLAGS= go install github.com/tsenart/vegeta/v12@latest) || VEGETA=""
fi
go build -o "$TMP/loadbench" ./bench/load
go build -o "$TMP/sagebench" ./cmd/sagebench
"$TMP/loadbench" serve -addr-file "$TMP/addr" -max 60m &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$TMP/addr" ] && break; sleep 0.1; done
URL="http://$(cat "$TMP/addr")"
echo "# $(date -u +%FT%TZ) server $URL; $(nproc) cores; $(go version | cut -d' ' -f3); load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
printf '{"model":"bench-embed","input":["the quick brown fox"]}' > "$TMP/body.json"

# cpu CMD…: run it, append "cpu_s" to the JSON line on its stdout.
withcpu() { "$TMP/loadbench" cpu -- "$@" 2> "$TMP/cpu" | python3 -c '
import json,sys; m=json.loads(sys.stdin.read().strip().splitlines()[-1])
c=[l for l in open(sys.argv[1]) if l.startswith("cpu_s=")]; m["cpu_s"]=float(c[-1][6:]) if c else None
m["cpu_us_per_req"]=round(m["cpu_s"]*1e6/max(m["sent"],1),1) if m["cpu_s"] is not None else None
print(json.dumps(m))' "$TMP/cpu"; }

run_sagebench() { run_binary "$TMP/sagebench" sagebench-run "$1"; }
run_base() { run_binary "$BASE_BIN" sagebench-base "$1"; }
run_binary() { # binary tool rate
  local bin=$1 tool=$2; shift 2
  cat > "$TMP/q2.yaml" <<YAML
q2:
  schedule: {process: constant, rate: $1, duration: ${DUR}s, count: 0}
  llm_ratio: 0
  policies: [fifo]
  rounds: 1
  embedding: {model: bench-embed, inputs: 1, words: 4}
YAML
  rm -rf "$TMP/out"
  "$TMP/loadbench" cpu -- "$bin" run -e Q2 -c "$TMP/q2.yaml" --target "$URL" --output-dir "$TMP/out" ${PACER:+--pacer "$PACER"} \
    > "$TMP/run.log" 2> "$TMP/cpu" || true
  local dir; dir=$(ls -d "$TMP"/out/q2/*/ | head -1)
  "$TMP/loadbench" run-lag -dir "$dir" -rate "$1" -duration "${DUR}s" -tool "$tool" | python3 -c '
import json,sys; m=json.loads(sys.stdin.read())
c=[l for l in open(sys.argv[1]) if l.startswith("cpu_s=")]; m["cpu_s"]=float(c[-1][6:])
m["cpu_us_per_req"]=round(m["cpu_s"]*1e6/max(m["sent"],1),1); print(json.dumps(m))' "$TMP/cpu"
}
run_bare() { withcpu "$TMP/loadbench" drive -url "$URL" -rate "$1" -duration "${DUR}s"; }
run_vegeta() {
  [ -z "$VEGETA" ] && return 0
  printf 'POST %s/v1/embeddings\nContent-Type: application/json\n@%s\n' "$URL" "$TMP/body.json" > "$TMP/targets"
  "$TMP/loadbench" cpu -- "$VEGETA" attack -targets "$TMP/targets" -rate "$1" -duration "${DUR}s" -keepalive=true -output "$TMP/v.bin" 2> "$TMP/cpu"
  "$VEGETA" encode --to json < "$TMP/v.bin" | "$TMP/loadbench" vegeta-lag -rate "$1" -duration "${DUR}s" | python3 -c '
import json,sys; m=json.loads(sys.stdin.read())
c=[l for l in open(sys.argv[1]) if l.startswith("cpu_s=")]; m["cpu_s"]=float(c[-1][6:])
m["cpu_us_per_req"]=round(m["cpu_s"]*1e6/max(m["sent"],1),1); print(json.dumps(m))' "$TMP/cpu"
}

TOOLS=(sagebench bare vegeta)
[ -n "${BASE_BIN:-}" ] && TOOLS+=(base)
declare -A EXTRA=()
for b in ${BINS:-}; do EXTRA[${b%%=*}]=${b#*=}; TOOLS+=("extra_${b%%=*}"); done
for name in "${!EXTRA[@]}"; do eval "run_extra_$name() { run_binary \"\${EXTRA[$name]}\" sagebench-$name \"\$1\"; }"; done
NT=${#TOOLS[@]}
for rep in $(seq "$REPS"); do
  for r in $RATES; do
    for k in $(seq 0 $((NT - 1))); do
      t=${TOOLS[$(( (k + rep) % NT ))]}
      "run_$t" "$r" | tee -a "$TMP/all.jsonl"
    done
  done
done
echo "# $(date -u +%FT%TZ) load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
PACER=${PACER:-} python3 - "$TMP/all.jsonl" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
groups = {}
for r in rows:
    groups.setdefault((r["tool"], r["rate"]), []).append(r)
print("%-14s %7s %3s %8s %9s %9s %8s %10s" % ("tool", "rate", "n", "deliv%", "lag p50us", "lag p99us", "cpu s", "cpu us/req"))
best = {}
for (tool, rate), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    med = lambda k: st.median(x[k] for x in g if x.get(k) is not None)
    print("%-14s %7.0f %3d %8.2f %9.0f %9.0f %8.2f %10.1f" % (tool, rate, len(g), med("delivered_pct"), med("lag_p50_us"), med("lag_p99_us"), med("cpu_s"), med("cpu_us_per_req")))
    if med("lag_p99_us") <= 5000 and med("delivered_pct") >= 99:
        best[tool] = max(best.get(tool, 0), rate)
for t in sorted({k[0] for k in groups}):
    print("highest sustained rate (median lag p99 <= 5 ms, delivered >= 99 %%): %-14s %s" % (t, best.get(t, "none")))
if best.get("sagebench-run") and best.get("vegeta"):
    print("ratio sagebench-run / vegeta: %.2f" % (best["sagebench-run"] / best["vegeta"]))

import os
pacer = os.environ.get("PACER") or "default"
def goal(name, value, limit, unit, ok):
    name = "%s (pacer %s)" % (name, pacer)
    if value is None:
        print("goal %s: not measured (goal %s)" % (name, limit))
    else:
        print("goal %s: %s (goal %s) %s" % (name, unit % value, limit, "PASS" if ok(value) else "FAIL"))
med = lambda tool, rate, k: (st.median(x[k] for x in groups[(tool, rate)] if x.get(k) is not None)
                            if (tool, rate) in groups else None)
for tool in sorted({k[0] for k in groups if k[0].startswith("sagebench-")}, key=lambda t: (t != "sagebench-run", t)):
    who = "" if tool == "sagebench-run" else " [%s]" % tool
    lag5 = med(tool, 5000, "lag_p99_us")
    cpu5, veg5 = med(tool, 5000, "cpu_us_per_req"), med("vegeta", 5000, "cpu_us_per_req")
    goal("5000/s lag p99" + who, None if lag5 is None else lag5 / 1000, "<= 1.0 ms", "%.2f ms", lambda v: v <= 1.0)
    goal("5000/s cpu/request %s / vegeta" % tool, cpu5 / veg5 if cpu5 and veg5 else None, "<= 1.10", "%.2f", lambda v: v <= 1.10)
    cpu8, veg8 = med(tool, 8000, "cpu_us_per_req"), med("vegeta", 8000, "cpu_us_per_req")
    goal("8000/s cpu/request %s / vegeta" % tool, cpu8 / veg8 if cpu8 and veg8 else None, "<= 1.20", "%.2f", lambda v: v <= 1.20)
    dl10, lag10 = med(tool, 10000, "delivered_pct"), med(tool, 10000, "lag_p99_us")
    goal("10000/s delivered" + who, dl10, ">= 99.9 %", "%.2f %%", lambda v: v >= 99.9)
    goal("10000/s lag p99" + who, None if lag10 is None else lag10 / 1000, "<= 2.0 ms", "%.2f ms", lambda v: v <= 2.0)
PY
