#!/usr/bin/env bash
# Set-up + build, then the main job on the embedded default (configs/default.yaml): a generated
# community graph, partitioned by METIS into 2 parts, trained by 2 workers under mpirun with AdaQP
# (quantized, overlapped halo exchanges with adaptive bit-widths); then, for comparison, a short
# Vanilla run (full-precision messages, no overlap) of the same job. The end of each run says
# accuracy, bytes against full precision, the bit-width mix and where the epoch time went; a last
# line compares the two. Extra arguments go to both runs (e.g. --set training.epochs=50).
# Ranks are not bound to one core each (--bind-to none): each worker uses its share of the cores.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
"$ADAQP_ROOT/scripts/setup.sh"
# The binary setup.sh has just built, whatever ADAQP_BIN says.
ADAQP_BIN=$ADAQP_BUILD_DIR/src/adaqp
OUT=${ADAQP_DEMO_OUT:-$ADAQP_ROOT/runs/demo}
rm -rf "$OUT"
cd "$ADAQP_ROOT"
train() {
  mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train \
    --config configs/default.yaml "$@"
}
echo "[demo] AdaQP on the embedded default job (2 workers)"
train --set output.dir="$OUT" "$@"
echo "[demo] Vanilla, 40 epochs of the same job, for comparison"
train --set output.dir="$OUT/vanilla" --set partition.dir="$OUT/partition" \
  --set communication.mode=vanilla --set training.epochs=40 --set output.progress_every=20 "$@"
python3 - "$OUT/metrics.jsonl" "$OUT/vanilla/metrics.jsonl" <<'PY'
import json, sys
adaqp, vanilla = ([json.loads(l) for l in open(p) if '"summary"' in l][-1] for p in sys.argv[1:])
print(f"[demo] AdaQP vs Vanilla: {adaqp['bytes_per_epoch'] / 1e6:.2f} vs "
      f"{vanilla['bytes_per_epoch'] / 1e6:.2f} MB/epoch sent "
      f"({vanilla['bytes_per_epoch'] / max(adaqp['bytes_per_epoch'], 1):.1f}x less), "
      f"{adaqp['mean_epoch_time_s']:.4f} vs {vanilla['mean_epoch_time_s']:.4f} s/epoch, "
      f"test {adaqp['test_acc_at_best_val']:.4f} (200 epochs) vs "
      f"{vanilla['test_acc_at_best_val']:.4f} (40 epochs). Over shared memory the link is nearly "
      "free, so quantizing buys bytes, not time; on a slow link (benchmarks/reproduce.sh) it buys "
      "time.")
PY
echo "[demo] metrics: $OUT/metrics.jsonl (schema: docs/metrics.md)  partition: $OUT/partition  (inspect: $ADAQP_BIN info --partition $OUT/partition)"
