#!/bin/bash
# Before (9a60f92) and after (5e2a65d: the divergence check in two passes, the masked product over
# the mask's set bits, sparse dropout's Philox blocks 32 at a time on AVX2), alternated in every
# round (the order flips each round):
#   1. bench_sparse_features, 1 thread, fastest of 5 (a training step's layer 0, dense against
#      sparse, at 8 densities);
#   2. `adaqp train`, Vanilla, GCN with each dataset's config: Cora on 1 worker as
#      accuracy_vanilla.sh runs it (hidden 16, 200 epochs), Cora and CiteSeer as accuracy_quant.sh
#      runs them (4 workers of a random partition, hidden 64, 100 epochs), Coauthor Physics at W=2
#      (METIS, its config, 20 epochs); one thread a rank, mpirun --bind-to none; each run timed by
#      GNU time (CPU seconds of all its processes).
# BEFORE and AFTER are the two adaqp binaries, BENCH_BEFORE and BENCH_AFTER the two benchmarks.
# Usage: BEFORE=... AFTER=... BENCH_BEFORE=... BENCH_AFTER=... run.sh OUT [ROUNDS]
set -euo pipefail
out=${1:?output dir}
rounds=${2:-3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
data=${ADAQP_SHARED_DATASETS:-$root/../shared/datasets}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMP_NUM_THREADS=1
train() {  # train BIN DATASET W RUN ARGS...
  local bin=$1 ds=$2 w=$3 run=$4
  shift 4
  /usr/bin/time -f "%U %S %e" -o "$out/$run.time" \
    mpirun --oversubscribe --bind-to none -np "$w" "$bin" train --config "$root/configs/$ds.yaml" \
    --set "dataset.path=$data/$ds" --set "partition.parts=$w" --set "partition.dir=$out/part-$ds-$w" \
    --set "output.dir=$out/$run" --set training.seed=1 --set training.threads=1 \
    --set training.device=cpu --set communication.mode=vanilla --set output.log_level=warn "$@" \
    >"$out/$run.log" 2>&1
}
for ((r = 1; r <= rounds; r++)); do
  order="before after"
  ((r % 2 == 0)) && order="after before"
  for v in $order; do
    bin=$BEFORE bench=$BENCH_BEFORE
    [[ $v == after ]] && bin=$AFTER bench=$BENCH_AFTER
    "$bench" --threads 1 --repeats 5 >"$out/bench-$v-$r.txt" 2>&1
    train "$bin" cora 1 "cora-w1-$v-$r"
    for ds in cora citeseer; do
      train "$bin" "$ds" 4 "$ds-$v-$r" --set partition.method=random --set training.epochs=100 \
        --set model.hidden=64
    done
    train "$bin" coauthor-physics 2 "coauthor-physics-$v-$r" --set training.epochs=20
  done
done
