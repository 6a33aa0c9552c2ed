#!/bin/bash
# The plain CSR product's check (it moved onto the cursor too): a 200k-node generated graph (degree
# 20, 128 features), GCN 3x256, W=2 Vanilla over shared memory, one thread a rank, 8 epochs;
# $BIN_DIR/adaqp-before (9a60f92) and $BIN_DIR/adaqp-head (6690efa) alternated, 3 rounds.
# Usage: BIN_DIR=... generated-graph.sh OUT
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMP_NUM_THREADS=1
out=${1:?output dir}
mkdir -p "$out"
for r in 1 2 3; do
  order="before head"
  ((r % 2 == 0)) && order="head before"
  for v in $order; do
    mpirun --oversubscribe --bind-to none -np 2 "${BIN_DIR:?}/adaqp-$v" train \
      --set dataset.format=synthetic --set dataset.synthetic.num_nodes=200000 \
      --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128 \
      --set model.layers=3 --set model.hidden=256 --set partition.parts=2 \
      --set "partition.dir=$out/part" --set training.epochs=8 --set training.threads=1 \
      --set training.device=cpu --set communication.mode=vanilla --set "output.dir=$out/$v-$r" \
      --set output.log_level=warn >"$out/$v-$r.log" 2>&1
  done
done
