#!/usr/bin/env bash
# The CI slice of bench/peers/run.sh: sagebench and the two peers that
# install fastest (inference-perf, AIPerf) at one rate (50 req/s, 2 s)
# against the conformance server; fails unless the grader reproduces each
# tool's own TTFT median from its export (calibrate grade exit 0) and every
# answered request is in the export. Skips, saying so, only when the
# Python package index is unreachable.
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! timeout 60 python3 -m pip download --no-deps --disable-pip-version-check -q -d "$(mktemp -d)" aiperf==0.13.0 >/dev/null 2>&1; then
  echo "bench/peers/ci.sh: SKIPPED — the Python package index is unreachable (pip download aiperf==0.13.0 failed)"
  exit 0
fi
bash bench/peers/install.sh inference-perf aiperf || { echo "bench/peers/ci.sh: a peer failed to install (see above)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/peers-ci.XXXXXX")
PEERS_NOTES=0 TOOLS="sagebench aiperf inference-perf" RATES=50 SECS=2 NODEFS=1 OUT=$WORK/peers.md WORK=$WORK \
  timeout 300 bash bench/peers/run.sh || { echo "bench/peers/ci.sh: run.sh failed"; exit 1; }
rc=0
for tool in sagebench aiperf inference-perf; do
  d=$WORK/$tool-50
  if [[ $(cat "$d/grade.rc" 2>/dev/null) != 0 ]]; then
    echo "bench/peers/ci.sh: $tool: grade failed: $(cat "$d/grade.err" 2>/dev/null; tail -5 "$d/tool.log" 2>/dev/null)"; rc=1; continue
  fi
  python3 - "$d/grade.json" "$tool" <<'PY' || rc=1
import json, sys
g = json.load(open(sys.argv[1]))
ttft = [m for m in g["metrics"] if m["metric"] == "TTFT"]
ok = g["lost"] == 0 and g["extra"] == 0 and g["truth_requests"] > 0 and ttft and ttft[0]["reproduced"]
print(f"{sys.argv[2]}: {g['truth_requests']} answered, {g['reported']} ok, {g['lost']} lost; TTFT own median "
      f"{ttft[0]['own_median'] if ttft else '-'} vs recomputed {ttft[0]['median'] if ttft else '-'}: {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
done
exit $rc
