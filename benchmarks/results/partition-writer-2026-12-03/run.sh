#!/usr/bin/env bash
# `adaqp partition` of a generated graph of 1M nodes with 128 dense features (512 MB), W=1 and 2,
# BEFORE's binary and AFTER's alternated over 3 rounds: wall seconds and peak RSS (GNU time), and
# an MD5 of the part files (both sides must write the same bytes).
# Usage: run.sh BEFORE_BIN AFTER_BIN RUNS_JSONL   (from the repository root)
set -euo pipefail
before=$1 after=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$out"
for round in 1 2 3; do
  for side in before after; do
    bin=$before
    [[ $side == after ]] && bin=$after
    for w in 1 2; do
      rm -rf "$work/part"
      /usr/bin/time -f "%e %M" -o "$work/time" "$bin" partition --config configs/default.yaml \
        --set dataset.synthetic.num_nodes=1000000 --set dataset.synthetic.feat_dim=128 \
        --set partition.method=contiguous --set partition.parts="$w" \
        --set partition.dir="$work/part" >/dev/null 2>&1
      read -r wall rss <"$work/time"
      md5=$(cat "$work"/part/part-*/part.bin | md5sum | cut -c1-12)
      echo "{\"round\": $round, \"side\": \"$side\", \"workers\": $w, \"wall_s\": $wall, \"peak_rss_kib\": $rss, \"parts_md5\": \"$md5\"}" >>"$out"
      echo "round $round $side W=$w: $wall s, $rss KiB, parts $md5" >&2
    done
  done
done
