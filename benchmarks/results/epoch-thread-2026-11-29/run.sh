#!/usr/bin/env bash
# The epoch thread's share of the adaptive scheme (plan + statistics after the epoch), before
# (8a56c22 with one log line timing finish_epoch, before-binary.diff) and after (746fa04), on the
# 1M-node graph (degree 50, 100 features, 47 classes), GCN 3x256, W=2 over shared memory, one
# thread a rank, the paper's objective (a solve every epoch), solve beside the epoch; 5 epochs;
# 3 alternated rounds.
set -euo pipefail
# Run from /work/bench/et: binaries ../bin/adaqp-before and ../bin/adaqp-after, the job ../tmp.yaml
# (job.yaml here), with output.dir set per run.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$(dirname "$0")"
for round in 1 2 3; do
  order="before after"; ((round % 2 == 0)) && order="after before"
  for which in $order; do
    run=r$round-$which
    rm -rf "$run"
    sed "s#dir: /work/bench/tmp-run#dir: $PWD/$run#" ../tmp.yaml >"$run.yaml"
    echo "[$(date +%T)] $run"
    mpirun --oversubscribe --bind-to none -np 2 ../bin/adaqp-$which train --config "$run.yaml" >"$run.log" 2>&1
  done
done
