#!/usr/bin/env bash
# Alternated rounds of bench_quant on one thread, two builds: before = 5f1b197 (the codec of the
# 2026-12-01 measurement, quant-dither-2026-12-01/), after = the commit under test.
# Usage: run.sh BEFORE_BIN AFTER_BIN OUT_DIR [ROUNDS]
set -euo pipefail
before=$1 after=$2 out=$3 rounds=${4:-7}
mkdir -p "$out"
args=(--rows 262144 --dim 256 --threads 1 --repeats 5)
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then order=(before after); else order=(after before); fi
  for side in "${order[@]}"; do
    bin=$before; [ "$side" = after ] && bin=$after
    OMP_NUM_THREADS=1 "$bin" "${args[@]}" >"$out/$side.round$r.txt" 2>&1
  done
done
