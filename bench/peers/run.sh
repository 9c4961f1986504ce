#!/usr/bin/env bash
# Side by side: sagebench and the peer load tools (AIPerf, GuideLLM,
# inference-perf, genai-bench) on one ground truth. For every tool and rate
# it starts a fresh conformance server (`sagebench calibrate serve`, a
# truth log per run), runs the tool on the same schedule (Poisson arrivals
# at RATE for SECS seconds, 8 input and 16 output tokens, streamed chat)
# under bench/peers/measure.py (CPU seconds, peak RSS of the process tree),
# grades its native export with `sagebench calibrate grade`, and writes
# the table to docs/peers.md (or $OUT) with the date, load and versions.
# Loopback only: every tool targets 127.0.0.1; tokenizers are a local
# word-level one (bench/peers/tokenizer.py), the Hugging Face hub is never
# asked (HF_HUB_OFFLINE=1).
#
#   bench/peers/run.sh                                  # all tools, RATES="10 100 500 1000", 5 s each
#   TOOLS="sagebench aiperf" RATES=100 SECS=3 OUT=/tmp/p.md bench/peers/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TOOLS=${TOOLS:-"sagebench aiperf guidellm inference-perf genai-bench"}
RATES=${RATES:-"10 100 500 1000"}
SECS=${SECS:-5}
OUT=${OUT:-docs/peers.md}
PEERS_HOME=${PEERS_HOME:-$HOME/.cache/sagebench/peers}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/peers.XXXXXX")}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
mkdir -p "$WORK"
echo "# work dir $WORK"

venv_of() { case $1 in
  aiperf) echo "$PEERS_HOME/aiperf-0.13.0" ;;
  guidellm) echo "$PEERS_HOME/guidellm-0.8.1" ;;
  inference-perf) echo "$PEERS_HOME/inference-perf-0.7.0" ;;
  genai-bench) echo "$PEERS_HOME/genai-bench-0.0.5" ;;
esac; }

# install the peers asked for (pinned; a failure is reported in the table)
peers=(); for t in $TOOLS; do [[ $t != sagebench ]] && peers+=("$t"); done
((${#peers[@]})) && bash bench/peers/install.sh "${peers[@]}"
go build -o "$WORK/sagebench" ./cmd/sagebench || exit 1
SB=$WORK/sagebench
TOK=$WORK/tokenizer
python3 bench/peers/tokenizer.py "$TOK" >/dev/null

start_server() { # start_server DIR [--role-chunk] → URL in $URL, pid in $SPID
  "$SB" calibrate serve --log "$1/truth.jsonl" --url-file "$1/url" --tokens 16 --ttft 50ms --itl 10ms ${2:-} >"$1/serve.log" 2>&1 &
  SPID=$!
  for _ in $(seq 100); do [[ -s $1/url ]] && break; sleep 0.1; done
  URL=$(cat "$1/url")
}
stop_server() { kill -INT "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }

. bench/peers/tools.sh

run_one() { # run_one TOOL RATE [defs] → $WORK/TOOL-RATE/{grade.json,cost.json}
  local tool=$1 rate=$2 d=$WORK/$1-$2 n role=
  n=$(python3 -c "print(max(int($rate*$SECS),1))")
  if [[ ${3:-} == defs ]]; then d=$WORK/$1-defs role=--role-chunk; fi
  rm -rf "$d"; mkdir -p "$d"
  start_server "$d" $role
  echo "# $(date -u +%T) $tool at $rate req/s ($n requests); load $(cut -d' ' -f1 /proc/loadavg)"
  python3 bench/peers/measure.py "$d/cost.json" -- bash -c "run_$(echo "$tool" | tr - _) \"\$@\"" _ "$d" "$URL" "$rate" "$n" \
    >"$d/tool.log" 2>&1
  echo "$(cut -d' ' -f1-3 /proc/loadavg)" >"$d/load"
  stop_server
  "$SB" calibrate grade --tool "$tool" --truth "$d/truth.jsonl" --format json "$d/export" >"$d/grade.json" 2>"$d/grade.err"
  echo "$?" >"$d/grade.rc"
  if [[ $tool == sagebench ]]; then # the same records counted from the actual send, as the peers count
    "$SB" calibrate grade --tool sagebench-sent --truth "$d/truth.jsonl" --format json "$d/export" >"$d/grade-sent.json" 2>>"$d/grade.err"
  fi
}
export -f $(compgen -A function | grep '^run_')
export SB TOK SECS WORK PEERS_HOME

for tool in $TOOLS; do
  if [[ $tool != sagebench ]] && ! grep -q '^ok' "$(venv_of "$tool").status" 2>/dev/null; then
    echo "# $tool not installed: $(cat "$(venv_of "$tool").status" 2>/dev/null)"; continue
  fi
  for rate in $RATES; do run_one "$tool" "$rate"; done
  # definitions: a few streams at 5 req/s with the role chunk first
  [[ -z ${NODEFS:-} ]] && run_one "$tool" 5 defs
done
python3 bench/peers/table.py "$WORK" "$OUT" "$PEERS_HOME" "$RATES" "$SECS" "$TOOLS"
echo "# wrote $OUT"
