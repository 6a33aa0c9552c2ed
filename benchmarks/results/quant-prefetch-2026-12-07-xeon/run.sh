#!/usr/bin/env bash
# Alternated rounds of bench_quant, one thread, two builds: BASE (before) and NEW (after).
# Usage: BASE=path/bench_quant NEW=path/bench_quant ROUNDS=5 STRIDES="1 4" run.sh OUTDIR
set -euo pipefail
out=${1:?output directory}
mkdir -p "$out"
for r in $(seq 1 "${ROUNDS:-5}"); do
  for s in ${STRIDES:-1 4}; do
    for b in base new; do
      bin=$BASE
      [ "$b" = new ] && bin=$NEW
      OMP_NUM_THREADS=1 "$bin" --rows 262144 --dim 256 --threads 1 --repeats 5 --devices cpu \
        --stride "$s" >"$out/round$r-stride$s-$b.txt" 2>&1
    done
  done
done
