#!/usr/bin/env bash
# bench_quant without (BEFORE) and with (AFTER) the rows' prefetch, alternated, one thread, rows of
# 256 floats: contiguous (stride 1) and a send list's pattern (one row of every 2 or 4).
# Usage: run.sh BEFORE_BIN AFTER_BIN ROUNDS > runs.jsonl
set -euo pipefail
before=$1 after=$2 rounds=${3:-3}
for ((r = 1; r <= rounds; ++r)); do
  for stride in 1 2 4; do
    for side in before after; do
      bin=$before
      [ "$side" = after ] && bin=$after
      "$bin" --rows 262144 --dim 256 --threads 1 --repeats 5 --devices cpu --stride "$stride" |
        grep '^{' | grep -v block_ |
        sed "s/^{/{\"side\":\"$side\",\"round\":$r,\"stride\":$stride,/"
    done
  done
done
