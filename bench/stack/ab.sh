#!/usr/bin/env bash
# Side-by-side comparison of two sagebench builds on bench/stack/run.sh:
# runs A, B, A, B, ... (N rounds), each labelled, so both see the same
# machine load; quote medians and ratios.
# Usage: bench/stack/ab.sh BIN_A BIN_B [ROUNDS] [STREAMS] [SECONDS] [RATE]
set -euo pipefail
a=$1
b=$2
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
for i in $(seq "$rounds"); do
	for side in A B; do
		bin=$a
		[ "$side" = B ] && bin=$b
		echo "## round $i build $side ($bin)"
		SAGEBENCH=$bin "$(dirname "$0")/run.sh" "$@"
	done
done
