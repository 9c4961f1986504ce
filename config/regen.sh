#!/usr/bin/env bash
# Rewrites config/qN-{full,quick}.yaml from the binary's defaults (the
# effective configuration of `sagebench run -e QN [--quick] --dry-run`).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/sagebench
go build -o "$bin" ./cmd/sagebench
for q in 1 2 3 4 5 6 7 8; do
  for scale in full quick; do
    flag=""; [ "$scale" = quick ] && flag="--quick"
    out=config/q$q-$scale.yaml
    {
      echo "# Q$q at its $scale scale: the effective configuration of \`sagebench run -e Q$q $flag\`,"
      echo "# written out so a paper's experiment is one file: sagebench run -e Q$q -c $out"
      echo "# (edit the numbers; every key is documented in docs/q$q.md or docs/run.md)."
      "$bin" run -e "Q$q" $flag --dry-run | sed -n '/^   effective config:/,/^dry run/p' | sed '1d;$d' |
        sed 's/^     //' | grep -v '^output_dir: results$' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    } > "$out"
  done
done
echo "config/: 16 files written"
