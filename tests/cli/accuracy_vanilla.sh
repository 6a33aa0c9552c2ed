#!/usr/bin/env bash
# Accuracy of Vanilla (full-precision) training against the literature, on the shared datasets.
# Each case is `adaqp train` with the dataset's config (configs/<dataset>.yaml) for training.seed
# 0..2; the score of a run is its test accuracy at the epoch of best validation accuracy, and the
# case passes when the mean over the 3 seeds reaches its threshold (per-seed scores vary by about a
# point: benchmarks/results/README.md):
#   Cora: 2-layer GCN, hidden 16, public split, on 1 worker, >= 80.5% (Kipf & Welling 2017
#     report 81.5%); accuracy_quant.sh checks Vanilla on Cora (>= 80.5%) and CiteSeer (>= 69.5%,
#     they report 70.3%) on 4 workers of a random partition;
#   Cora with GraphSAGE-mean >= 78%, and with GAT (the GAT paper's 8 heads of 8, dropout 0.6 on
#     inputs and attention, lr 0.005) >= 80% (Velickovic et al. 2018 report 83.0%);
#   Amazon Photo (random 60/20/20 split, edges symmetrised): GCN >= 90% (Shchur et al. 2018)
#     and GraphSAGE-mean >= 91% (no published figure for this split: both score about 94% here);
#     its raw bag-of-words features are not normalised, where GraphSAGE initialised with too
#     large weights stalled (47-87% by seed).
# Prints a table of per-seed and mean scores and the run time. Skips visibly when the shared
# datasets are missing (fails when CI=true). One compute thread per worker; the runs of one
# dataset and worker count share one partition directory.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
data="${ADAQP_SHARED_DATASETS:-}"
# shellcheck source=tests/cli/lib/shared_datasets.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/shared_datasets.sh"
require_shared_datasets cora amazon-photo
export OMP_NUM_THREADS=1
start=$SECONDS

# run_case CASE DATASET W THRESHOLD ARGS...: trains seeds 0..2 and appends one line per seed,
# "CASE W THRESHOLD SEED SCORE SECONDS", to $tmp/results.
run_case() {
  local name=$1 ds=$2 w=$3 threshold=$4
  shift 4
  for seed in 0 1 2; do
    local out="$tmp/$name-w$w/s$seed" t0=$SECONDS
    if ! timeout 300 mpirun --oversubscribe -np "$w" "$ADAQP_BIN" train \
        --config "$ADAQP_SOURCE_DIR/configs/$ds.yaml" --set "dataset.path=$data/$ds" \
        --set "partition.parts=$w" --set "partition.dir=$tmp/partition-$ds-w$w" \
        --set "output.dir=$out" --set "training.seed=$seed" --set training.threads=1 \
        --set communication.mode=vanilla --set training.device=cpu \
        --set output.log_level=warn "$@" >"$tmp/run.log" 2>&1; then
      cat "$tmp/run.log"
      echo "FAIL: $name on $w workers, seed $seed" >&2
      exit 1
    fi
    record "$name" "$w" "$threshold" "$seed" "$out" $((SECONDS - t0))
  done
}

# record CASE W THRESHOLD SEED RUN_DIR SECONDS: appends the run's score to $tmp/results.
record() {
  local score
  score=$(python3 -c 'import json, sys
rec = [json.loads(l) for l in open(sys.argv[1])][-1]
assert rec["event"] == "summary" and rec["metric"] == "accuracy", rec
print(rec["test_acc_at_best_val"])' "$5/metrics.jsonl")
  echo "$1 $2 $3 $4 $score $6" >>"$tmp/results"
}

run_case cora-gcn cora 1 0.805
run_case cora-sage cora 1 0.78 --set model.type=sage
run_case cora-gat cora 1 0.80 --set model.type=gat --set model.heads=8 --set model.hidden=64 \
  --set model.dropout=0.6 --set model.attention_dropout=0.6 --set training.lr=0.005
run_case amazon-photo-gcn amazon-photo 1 0.90
run_case amazon-photo-sage amazon-photo 1 0.91 --set model.type=sage

python3 - "$tmp/results" "$((SECONDS - start))" <<'PY'
import sys
from collections import OrderedDict

cases = OrderedDict()
for line in open(sys.argv[1]):
    name, w, threshold, seed, score, secs = line.split()
    case = cases.setdefault((name, int(w)), {"threshold": float(threshold), "scores": [], "secs": 0})
    case["scores"].append(float(score))
    case["secs"] += int(secs)
print(f"{'case':<18} {'W':>2}  {'seed 0..2 (test acc at best val, %)':<36} {'mean':>6} "
      f"{'needs':>6} {'time':>6}")
failed = []
for (name, w), c in cases.items():
    mean = sum(c["scores"]) / len(c["scores"])
    ok = mean >= c["threshold"]
    seeds = " ".join(f"{100 * s:5.1f}" for s in c["scores"])
    print(f"{name:<18} {w:>2}  {seeds:<36} {100 * mean:6.2f} {100 * c['threshold']:6.1f} "
          f"{c['secs']:5d}s {'ok' if ok else 'FAIL'}")
    if not ok:
        failed.append(f"{name} W={w}")
print(f"total time {sys.argv[2]} s")
if failed:
    sys.exit("FAIL: mean accuracy below the threshold: " + ", ".join(failed))
print("accuracy_vanilla: all passed")
PY
