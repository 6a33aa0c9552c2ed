#!/usr/bin/env bash
# The link sweep's W=2 GCN runs at 300 Mbit/s and 10 Gbit/s with the virtual cluster's hosts
# unpinned (scripts/vcluster.sh of 70b3158, from a git worktree) and pinned (this checkout),
# alternated old, new, old, new (2 rounds each, 20 epochs), the same adaqp binary for all four.
# Needs root (the virtual cluster). Usage: run.sh [OUT] (default /tmp/vcluster-pinned).
# cora-threads0/ was run the same way, alternating the two vcluster.sh 3 rounds:
#   "$root/scripts/vcluster.sh" --hosts 2 --bandwidth 1gbit -- build/src/adaqp train \
#     --config configs/cora.yaml --set dataset.path=$DATASETS/cora --set training.epochs=30 \
#     --set output.dir=OUT   (default training.threads 0; median of epoch_time_s from epoch 3)
set -euo pipefail
repo=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
out=${1:-/tmp/vcluster-pinned}
old=$out/oldtree
mkdir -p "$out"
[[ -d $old ]] || git -C "$repo" worktree add -q "$old" 70b3158
i=0
for v in old new old new; do
  i=$((i + 1))
  root=$repo
  [[ $v == old ]] && root=$old
  ADAQP_BIN=$repo/build/src/adaqp ADAQP_BUILD_DIR=$repo/build RATES="300mbit 10gbit" MODELS=gcn \
    MODES="vanilla adaqp" ROUNDS=2 WORKERS=2 EPOCHS=20 \
    "$root/benchmarks/links/run.sh" "$out/$i-$v" >"$out/$i-$v.log" 2>&1
  grep -A4 '| link | model | W | Vanilla s' "$out/$i-$v.log" | sed "s/^/$i-$v /"
done
