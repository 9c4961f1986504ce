#!/bin/sh
# Regenerates the benchstat goldens (golden/*.csv, golden/*.stderr, and
# golden/*.txt for people) by running the real benchstat, at the x/perf
# version pinned in go.mod, over the inputs listed in cases.txt.
# Usage: sh internal/stats/testdata/regen.sh   (or go test ./internal/stats -update)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ver=$(cd "$here" && go list -m -f '{{.Version}}' golang.org/x/perf)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN="$bin" GOFLAGS=-mod=mod go install "golang.org/x/perf/cmd/benchstat@$ver"
cd "$here"
mkdir -p golden
grep -v '^#' cases.txt | while IFS='|' read -r name args; do
	name=$(echo "$name" | tr -d ' ')
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086
	"$bin/benchstat" -format csv $args >"golden/$name.csv" 2>"golden/$name.stderr"
	# shellcheck disable=SC2086
	"$bin/benchstat" $args >"golden/$name.txt" 2>/dev/null
done
echo "benchstat@$ver" >golden/VERSION
