#!/usr/bin/env bash
# The harness's measurement floor at several rates: `sagebench calibrate`
# drives a Q2 plan of streamed chat only, then of embeddings only, at each
# rate against the exact-deadline server, and prints measured-minus-true
# TTFT/E2E (median, p99) and the delivered-rate error per run, with the
# load average before and after. Loopback only.
#
#   bench/fidelity/run.sh                        # RATES="100 500 1000 2000", 5 s per run
#   RATES="100 1000" SECONDS_PER_RUN=10 bench/fidelity/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RATES=${RATES:-"100 500 1000 2000"}
SECS=${SECONDS_PER_RUN:-5}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fidelity.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/sagebench" ./cmd/sagebench
echo "# $(nproc) cores; $(go version | cut -d' ' -f3); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in chat embeddings; do
  ratio=1; [ "$kind" = embeddings ] && ratio=0
  for r in $RATES; do
    cat > "$TMP/q2.yaml" <<YAML
q2:
  schedule: {process: poisson, rate: $r, count: 0, duration: ${SECS}s}
  llm_ratio: $ratio
  policies: [fifo]
  llm: {model: m, max_tokens: 16, prompt_words: 8, stream: true}
  embedding: {model: e, inputs: 1, words: 8}
YAML
    "$TMP/sagebench" calibrate -e Q2 -c "$TMP/q2.yaml" --phase "${SECS}s" --format json > "$TMP/$kind-$r.json" || true
    python3 - "$TMP/$kind-$r.json" "$kind" "$r" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))[0]
t, e = f["ttft"], f["e2e"]
tt = "%8.3f %8.2f%% %8.3f" % (t["median_ms"], t["median_pct"], t["p99_ms"]) if t["count"] else "%8s %9s %8s" % ("-", "-", "-")
print("%-10s %6s/s  TTFT err med %s p99   E2E err med %8.3f %8.2f%% p99 %8.3f   rate %+6.2f%%  load %.1f  goal %s" % (
    sys.argv[2], sys.argv[3], tt, e["median_ms"], e["median_pct"], e["p99_ms"], f["rate_error_pct"], f.get("loadavg_1m", 0),
    "met" if f["goal_met"] else "NOT met"))
PY
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
