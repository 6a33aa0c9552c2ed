#!/usr/bin/env bash
# 1M-node job at W=2 over shared memory, the paper's objective (so that the solver runs), re-solving
# when the ranges drift (default 0.5) and at every epoch (0).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for drift in 0.5 0; do
  mpirun --bind-to none -np 2 build/src/adaqp train --set dataset.synthetic.num_nodes=1000000 \
    --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128 \
    --set model.hidden=256 --set model.layers=3 --set training.epochs=8 --set training.threads=1 \
    --set communication.mode=adaqp --set communication.objective=normalized \
    --set communication.resolve_drift=$drift --set partition.parts=2 \
    --set partition.dir=runs/solver-1m/partition --set output.dir=runs/solver-1m/drift-$drift \
    --set output.log_level=warn
done
