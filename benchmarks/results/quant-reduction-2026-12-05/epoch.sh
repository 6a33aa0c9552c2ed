#!/usr/bin/env bash
# Alternated rounds of one quantized training job, two builds (before, after): AdaQP-q at a uniform
# 2 bits (every halo message goes through the codec), GCN 3x256 on a generated graph of 100,000
# nodes (degree 20, 128 features), W=2, one thread a rank, 12 epochs.
# Usage: epoch.sh BEFORE_ADAQP AFTER_ADAQP OUT_DIR [ROUNDS]
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/adaqp.sh"
before=$1 after=$2 out=$3 rounds=${4:-3}
mkdir -p "$out"
mapfile -t job < <(synthetic_graph 100000 avg_degree=20 feat_dim=128 seed=1
  gnn_model 3 256 type=gcn dropout=0.5
  set_pairs partition.parts=2 "partition.dir=$out/partition" training.epochs=12 \
    training.eval_every=12 training.threads=1 output.log_level=warn communication.mode=quant \
    communication.scheme=uniform communication.bits=2)
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then order=(before after); else order=(after before); fi
  for side in "${order[@]}"; do
    bin=$before; [ "$side" = after ] && bin=$after
    OMP_NUM_THREADS=1 mpirun --oversubscribe --bind-to none -np 2 "$bin" train "${job[@]}" \
      --set "output.dir=$out/$side.round$r" >"$out/$side.round$r.log" 2>&1
  done
done
