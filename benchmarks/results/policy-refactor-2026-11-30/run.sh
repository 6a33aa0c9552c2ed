#!/usr/bin/env bash
# A/B of the adaptive policy refactor: 200k-node generated graph, GCN 3x256, W=2, shm, 1 thread a rank.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
job=(--set dataset.synthetic.num_nodes=200000 --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128
     --set model.layers=3 --set model.hidden=256 --set partition.parts=2 --set partition.dir=/tmp/ab/part
     --set training.epochs=8 --set training.threads=1 --set training.device=cpu --set output.log_level=warn)
for round in 1 2 3; do
  pair=(/tmp/base-wt/build/src/adaqp /work/main/build/src/adaqp); names=(before after)
  if ((round % 2 == 0)); then pair=("${pair[1]}" "${pair[0]}"); names=(after before); fi
  for i in 0 1; do
    out=/tmp/ab/r$round-${names[$i]}
    rm -rf "$out"
    mpirun --oversubscribe --bind-to none -np 2 "${pair[$i]}" train "${job[@]}" --set output.dir=$out > $out.log 2>&1
  done
done
