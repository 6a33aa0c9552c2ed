#!/usr/bin/env bash
# Set-up + build, then the main job on the embedded default: a generated community graph,
# partitioned by METIS into 2 parts, trained by 2 workers under mpirun (configs/default.yaml).
# Extra arguments go to `adaqp train` (e.g. --set training.epochs=50).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/setup.sh"
BUILD_DIR=${ADAQP_BUILD_DIR:-$ROOT/build}
OUT=${ADAQP_DEMO_OUT:-$ROOT/runs/demo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$OUT"
cd "$ROOT"
mpirun --oversubscribe -np 2 "$BUILD_DIR/src/adaqp" train --config configs/default.yaml \
  --set output.dir="$OUT" "$@"
echo "[demo] metrics: $OUT/metrics.jsonl  partition: $OUT/partition  (inspect: $BUILD_DIR/src/adaqp info --partition $OUT/partition)"
