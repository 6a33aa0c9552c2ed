#!/usr/bin/env bash
# Set-up of the Cora accuracy tests (ctest fixture cora_vanilla_runs): Vanilla training of
# configs/cora.yaml on 4 workers for seeds 0..10, into $ADAQP_ACCURACY_RUNS/vanilla-sSEED. Vanilla
# runs are deterministic, so accuracy_vanilla (seeds 0..4), accuracy_quant (1..5) and
# accuracy_adaptive (1..10) compare against these runs instead of training each again. Fails when a
# run fails; skips like them when the shared Cora is missing.
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?repository root}"
: "${ADAQP_ACCURACY_RUNS:?directory of the shared Vanilla runs}"
# shellcheck source=tests/cli/lib/shared_datasets.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/shared_datasets.sh"
require_shared_datasets cora
cora="$ADAQP_SHARED_DATASETS/cora"
export OMP_NUM_THREADS=1
# Runs of an earlier build must not stand in for this one's: start empty, publish when complete.
rm -rf "$ADAQP_ACCURACY_RUNS" "$ADAQP_ACCURACY_RUNS.partial"
tmp="$ADAQP_ACCURACY_RUNS.partial"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/lib/cora_w4.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cora_w4.sh"
for seed in 0 1 2 3 4 5 6 7 8 9 10; do
  run_cora_w4 vanilla "$seed" --set communication.mode=vanilla
done
rm -rf "$tmp/partition"
mv "$tmp" "$ADAQP_ACCURACY_RUNS"
echo "accuracy_cora_baseline: 11 Vanilla runs in $ADAQP_ACCURACY_RUNS"
