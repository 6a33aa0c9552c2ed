#!/usr/bin/env bash
# Accuracy of 2-bit uniform AdaQP at W=4: the backward noise per sender (NEW) against shared (OLD).
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMP_NUM_THREADS=1
OUT=$1; shift
mkdir -p "$OUT"
for cfg in "$@"; do
for seed in 0 1 2 3 4; do
  for which in new old; do
    bin=/work/main/build/src/adaqp; [[ $which == old ]] && bin=/work/base/build/src/adaqp
    name=$(basename "$cfg" .yaml)-s$seed-$which
    mpirun --bind-to none --oversubscribe -np 4 "$bin" train --config "$cfg" \
      --set dataset.path=/work/shared/datasets/$(basename "$cfg" .yaml) \
      --set partition.parts=4 --set partition.dir="$OUT/part-$(basename "$cfg" .yaml)" \
      --set communication.scheme=uniform --set communication.bits=2 --set training.seed=$seed \
      --set output.dir="$OUT/$name" > "$OUT/$name.log" 2>&1
    python3 -c "import json,sys; s=[json.loads(l) for l in open('$OUT/$name/metrics.jsonl')][-1]; print('$name', s['best_val_acc'], s['test_acc_at_best_val'])"
  done
done
done
