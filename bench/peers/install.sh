#!/usr/bin/env bash
# Install the peer load generators, one virtualenv per tool and pinned version
# (they have conflicting dependencies), from the Python package index only.
#
#   bash bench/peers/install.sh [tool ...]    # default: all four peers
#
# Each venv lives at $PEERS_HOME/<tool>-<version> (default
# ~/.cache/sagebench/peers). Per tool it writes <venv>.status: "ok <seconds> <MB>"
# or "fail <seconds>" with the pip log at <venv>.log, so a peer that cannot be
# installed is reported with its exact error, never skipped silently.
set -u
PEERS_HOME=${PEERS_HOME:-$HOME/.cache/sagebench/peers}
mkdir -p "$PEERS_HOME"

# tool  version  python  package-spec
PEERS=(
  "aiperf 0.13.0 3.11 aiperf==0.13.0"
  "guidellm 0.8.1 3.11 guidellm==0.8.1"
  "inference-perf 0.7.0 3.12 inference-perf==0.7.0"
  "genai-bench 0.0.5 3.11 genai-bench==0.0.5"
)

python_for() { # python_for 3.12 -> an interpreter of that minor version
  local v=$1 p
  for p in "python$v" "$HOME/.pyenv/versions/$v".*/bin/python3 "/usr/bin/python$v"; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys' 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  return 1
}

install_one() {
  local tool=$1 ver=$2 pyv=$3 spec=$4
  local venv=$PEERS_HOME/$tool-$ver log=$PEERS_HOME/$tool-$ver.log st=$PEERS_HOME/$tool-$ver.status
  if [[ -f $st && $(cut -d' ' -f1 <"$st") == ok && -x $venv/bin/python ]]; then
    echo "$tool $ver: already installed ($(cat "$st"))"; return 0
  fi
  local py t0=$SECONDS
  if ! py=$(python_for "$pyv"); then
    echo "fail 0 no python$pyv interpreter (the package requires Python >= $pyv)" >"$st"
    echo "$tool $ver: FAIL no python$pyv"; return 1
  fi
  rm -rf "$venv"
  if "$py" -m venv "$venv" >"$log" 2>&1 &&
     "$venv/bin/pip" install --disable-pip-version-check -q "$spec" >>"$log" 2>&1; then
    local mb; mb=$(du -sm "$venv" | cut -f1)
    echo "ok $((SECONDS - t0)) $mb python$pyv" >"$st"
    echo "$tool $ver: ok in $((SECONDS - t0)) s, ${mb} MB"
  else
    echo "fail $((SECONDS - t0)) $(grep -m1 -E 'ERROR|error:' "$log" | cut -c1-300)" >"$st"
    echo "$tool $ver: FAIL after $((SECONDS - t0)) s: $(tail -3 "$log")"; return 1
  fi
}

want=("$@")
rc=0
for line in "${PEERS[@]}"; do
  read -r tool ver pyv spec <<<"$line"
  if ((${#want[@]})) && [[ ! " ${want[*]} " == *" $tool "* ]]; then continue; fi
  install_one "$tool" "$ver" "$pyv" "$spec" || rc=1
done
exit $rc
