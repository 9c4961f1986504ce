#!/usr/bin/env bash
# Q1 on sage's runtime against Q1 on a real local Ray cluster: the same
# workload (seed, rate, count → the same workload_hash), the same target
# (a `sagebench serve` reference stack in its own process), then
# `sagebench compare` and `sagebench report` over both. CPU seconds and peak
# RSS are measured per runtime from /proc: the sagebench process (harness +
# sage's runtime, or harness only on Ray) and, on Ray, every process of the
# cluster (head, raylet, dashboard, workers, actors).
#
#   OUT=results-ray REPEAT=3 RATE=10 N=300 NODES=1 bench/ray/compare.sh
#   NODES=2: Ray with a worker node (`ray start --address`, 1 CPU each)
#   against sage with --nodes 2 (NATS workers).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-results-ray}"; REPEAT="${REPEAT:-3}"; RATE="${RATE:-10}"; N="${N:-300}"; NODES="${NODES:-1}"
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
venv=$(bench/ray/venv.sh)
bin="$OUT/sagebench"; go build -o "$bin" ./cmd/sagebench
tmp=$(mktemp -d /tmp/sbcmp.XXXX)
pids=()
cleanup() { cp "$tmp"/*.log "$OUT"/ 2>/dev/null || true
            for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done; sleep 5
            for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# cputicks PID...: user+sys CPU ticks of the processes and their reaped children.
cputicks() { local t=0 p; for p in "$@"; do [ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14+$15+$16+$17}' /proc/$p/stat 2>/dev/null || echo 0))); done; echo $t; }
# tree PID: the process and its descendants.
tree() { local p=$1; echo "$p"; for c in $(cat /proc/$p/task/*/children 2>/dev/null); do tree "$c"; done; }
rss_kb() { local t=0 p; for p in "$@"; do [ -r /proc/$p/status ] && t=$((t + $(awk '/^VmRSS/{r=$2} END{print r+0}' /proc/$p/status 2>/dev/null || echo 0))); done; echo $t; }

# The target: the reference stack in a process of its own.
sport=$(freeport)
setsid "$bin" serve --listen "127.0.0.1:$sport" >"$tmp/serve.log" 2>&1 & pids+=($!)
for _ in $(seq 120); do grep -q "listening on" "$tmp/serve.log" && break; sleep 1; done
target="http://127.0.0.1:$sport"

# The Ray cluster.
gcs=$(freeport); dash=$(freeport); client=$(freeport); agent=$(freeport)
# Secured, as Ray 2.60 is by default once ~/.ray/auth_token exists.
# A generous GCS health check: a loaded machine stalls the raylet for seconds.
export RAY_health_check_period_ms=10000 RAY_health_check_failure_threshold=30
export PATH="$venv/bin:$PATH" RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=token RAY_AUTH_TOKEN=$(head -c16 /dev/urandom | od -An -tx1 | tr -d ' \n')
ray_start=$(date +%s.%N)
setsid ray start --head --block --disable-usage-stats --include-dashboard true --node-ip-address 127.0.0.1 \
  --port "$gcs" --dashboard-host 127.0.0.1 --dashboard-port "$dash" --ray-client-server-port "$client" \
  --dashboard-agent-listen-port "$agent" --num-cpus "$(( NODES == 1 ? 2 : 1 ))" --temp-dir "$tmp/ray" >"$tmp/ray.log" 2>&1 & pids+=($!)
head=$!
for _ in $(seq 480); do curl -sf -H "Authorization: Bearer $RAY_AUTH_TOKEN" "http://127.0.0.1:$dash/api/version" >/dev/null && break; sleep 0.5; done
echo "ray: cluster ready after $(echo "$(date +%s.%N) - $ray_start" | bc) s: $(curl -s -H "Authorization: Bearer $RAY_AUTH_TOKEN" http://127.0.0.1:$dash/api/version)"
if [ "$NODES" -gt 1 ]; then
  for i in $(seq 2 "$NODES"); do
    setsid ray start --block --disable-usage-stats --address "127.0.0.1:$gcs" --node-ip-address 127.0.0.1 \
      --num-cpus 1 >"$tmp/ray-worker$i.log" 2>&1 & pids+=($!)
  done
  sleep 20
fi

# run BACKEND ARGS...: one `sagebench run`, with the CPU and peak RSS of
# the runtime measured (sage: the sagebench process; ray: the sagebench
# process and the cluster's processes).
run() {
  local backend=$1; shift
  local c0 c1 peak=0 r
  c0=$(cputicks $(for p in "${pids[@]:1}"; do tree "$p"; done))
  "$bin" run -e Q1 --backend "$backend" --target "$target" --seed 42 --repeat "$REPEAT" --rate "$RATE" \
    --total-requests "$N" --output-dir "$OUT" "$@" >"$OUT/$backend-stdout.txt" 2>"$OUT/$backend-stderr.txt" & r=$!
  local sc0; sc0=0
  while kill -0 $r 2>/dev/null; do
    local all="$r $(tree $r | tail -n +2)"
    [ "$backend" = ray ] && all="$all $(for p in "${pids[@]:1}"; do tree "$p"; done)"
    local m; m=$(rss_kb $all); [ "$m" -gt "$peak" ] && peak=$m
    sc=$(cputicks $r); [ "$sc" -gt 0 ] && sc0=$sc
    sleep 0.5
  done
  wait $r || echo "sagebench run --backend $backend exited $?"
  c1=$(cputicks $(for p in "${pids[@]:1}"; do tree "$p"; done))
  local hz; hz=$(getconf CLK_TCK)
  echo "$backend: sagebench process cpu_s=$(echo "scale=2; $sc0/$hz" | bc) cluster cpu_s=$(echo "scale=2; ($c1-$c0)/$hz" | bc) peak_rss_mb=$((peak/1024)) transactions=$((REPEAT*N))" | tee -a "$OUT/resources.txt"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/resources.txt"
nodes=(); [ "$NODES" -gt 1 ] && nodes=(--nodes "$NODES")
run sage "${nodes[@]}"
if ! curl -sf -H "Authorization: Bearer $RAY_AUTH_TOKEN" "http://127.0.0.1:$dash/api/version" >/dev/null; then
  echo "the Ray cluster is gone (see $OUT/ray.log)"; exit 1
fi
run ray --ray-address "http://127.0.0.1:$dash"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/resources.txt"
"$bin" compare --col backend "$OUT"/unified_results.jsonl >"$OUT/compare.txt" 2>&1 || true
"$bin" report "$OUT"/q1/* -o "$OUT/report.html" >/dev/null 2>&1 || true
cat "$OUT/resources.txt"; head -60 "$OUT/compare.txt"
python3 bench/ray/table.py "$OUT" | tee "$OUT/table.md"
