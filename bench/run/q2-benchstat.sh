#!/usr/bin/env bash
# Runs Q2 ControlMix at quick scale REPEAT times (default 6, the fewest
# samples benchstat needs for a 95 % interval) against the embedded stack,
# then summarises every repetition's bench.txt with benchstat.
#
#   bench/run/q2-benchstat.sh [REPEAT] [extra sagebench run flags...]
#
# Exit status is sagebench's: 5 means some repetition was invalid (the
# driver missed its schedule, e.g. on a busy machine); the records and the
# benchstat table are still produced, but read them with that in mind.
set -uo pipefail
cd "$(dirname "$0")/../.."
repeat=${1:-6}
shift || true
out=$(mktemp -d)
go run ./cmd/sagebench run -e Q2 --quick --repeat "$repeat" --output-dir "$out" "$@"
status=$?
cat "$out"/q2/*/bench.txt | go run golang.org/x/perf/cmd/benchstat -
echo "records: $out"
exit $status
