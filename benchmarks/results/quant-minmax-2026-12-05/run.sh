#!/usr/bin/env bash
# Alternated rounds of bench_quant on one thread, two builds (before, after), on rows that stream
# from memory (262,144 x 256) and on rows that stay in cache (256 x 256, 2001 repeats).
# Usage: run.sh BEFORE_BIN AFTER_BIN OUT_DIR [ROUNDS]
set -euo pipefail
before=$1 after=$2 out=$3 rounds=${4:-7}
mkdir -p "$out/memory" "$out/cache"
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then order=(before after); else order=(after before); fi
  for side in "${order[@]}"; do
    bin=$before; [ "$side" = after ] && bin=$after
    OMP_NUM_THREADS=1 "$bin" --rows 262144 --dim 256 --threads 1 --repeats 5 --devices cpu \
      >"$out/memory/$side.round$r.txt" 2>&1
    OMP_NUM_THREADS=1 "$bin" --rows 256 --dim 256 --threads 1 --repeats 2001 --devices cpu \
      >"$out/cache/$side.round$r.txt" 2>&1
  done
done
