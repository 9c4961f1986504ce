#!/usr/bin/env bash
# Installs the pinned ray[default] into a virtualenv from the Python
# package index (PyPI only), cached by version: a second call returns at
# once. Prints the virtualenv's directory on stdout; exits non-zero (the
# pip output on stderr) when it cannot be installed.
#
#   RAY_VERSION      the pinned version (default below)
#   SAGEBENCH_CACHE  the cache directory (default ~/.cache/sagebench)
set -euo pipefail
RAY_VERSION="${RAY_VERSION:-2.60.0}"
cache="${SAGEBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sagebench}"
venv="$cache/ray-venv-$RAY_VERSION"
if [ -f "$venv/.installed" ] && "$venv/bin/ray" --version 2>/dev/null | grep -q "version $RAY_VERSION"; then
  echo "$venv"; exit 0
fi
mkdir -p "$cache"
rm -rf "$venv"
py="${PYTHON:-python3}"
if ! "$py" -m venv "$venv" >&2; then
  echo "bench/ray/venv.sh: $py -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1
fi
start=$(date +%s)
if ! "$venv/bin/pip" install --disable-pip-version-check --no-input -q  \
    "ray[default]==$RAY_VERSION" >&2; then
  rm -rf "$venv"
  echo "bench/ray/venv.sh: pip install ray[default]==$RAY_VERSION failed (is the package index reachable?)" >&2; exit 1
fi
touch "$venv/.installed"
echo "bench/ray/venv.sh: ray[default]==$RAY_VERSION installed in $(( $(date +%s) - start )) s" >&2
echo "$venv"
