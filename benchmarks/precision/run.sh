#!/usr/bin/env bash
# TF32 against FP32 on the GPU (training.precision, docs/configuration.md): every dataset of
# DATASETS (../shared/datasets, trained with its config in configs/) on one rank for SEEDS seeds in
# each precision, the same seeds for both: test accuracy at the best validation epoch and the mean
# epoch time from each run's summary record; then per dataset and precision the mean and standard
# deviation of the accuracy, the mean epoch time, and tf32's difference and time ratio to fp32.
# tf32 needs a CUDA device (it is refused on the CPU); DEVICE=cpu PRECISIONS=fp32 runs the flow
# without one.
# Usage: benchmarks/precision/run.sh [OUT]   (default: a temporary directory)
# Environment [defaults]: ADAQP_BIN [build/src/adaqp], ADAQP_SHARED_DATASETS [../shared/datasets],
# DATASETS [cora citeseer], SEEDS [3], PRECISIONS [fp32 tf32], DEVICE [cuda].
# Output: runs.csv and summary.csv in OUT, and the summary table on stdout.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
DATA=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
read -r -a datasets <<<"${DATASETS:-cora citeseer}"
read -r -a precisions <<<"${PRECISIONS:-fp32 tf32}"
seeds=${SEEDS:-3}
device=${DEVICE:-cuda}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
require_adaqp
echo "dataset,precision,seed,test_acc_at_best_val,mean_epoch_time_s" >"$out/runs.csv"
"${ADAQP_PYTHON:-python3}" "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$out/provenance.json"
# Seeds outside, precisions inside: the two precisions alternate, so that a drift of the machine
# over the run falls on both alike.
for ds in "${datasets[@]}"; do
  [[ -d "$DATA/$ds" ]] || { echo "precision: dataset $ds missing in $DATA" >&2; exit 1; }
  for ((s = 1; s <= seeds; s++)); do
    for p in "${precisions[@]}"; do
      run="$out/$ds-$p-s$s"
      echo "precision: $ds $p seed $s" >&2
      mpirun --bind-to none -np 1 "$ADAQP_BIN" train --config "$ADAQP_ROOT/configs/$ds.yaml" \
        --set "dataset.path=$DATA/$ds" --set partition.parts=1 --set "partition.dir=$out/$ds-p1" \
        --set "training.device=$device" --set "training.precision=$p" --set "training.seed=$s" \
        --set "output.dir=$run" --set output.log_level=warn >"$run.log" 2>&1 ||
        { cat "$run.log" >&2; exit 1; }
      python3 - "$run/metrics.jsonl" "$ds" "$p" "$s" >>"$out/runs.csv" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{s['test_acc_at_best_val']},{s['mean_epoch_time_s']}")
PY
    done
  done
done
python3 - "$out/runs.csv" "$out/summary.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((r["dataset"], r["precision"]), []).append(r)
summary = []
for (ds, p), rs in groups.items():
    acc = [100 * float(r["test_acc_at_best_val"]) for r in rs]
    t = [float(r["mean_epoch_time_s"]) for r in rs]
    summary.append({"dataset": ds, "precision": p, "seeds": len(rs), "test_acc_mean": statistics.mean(acc),
                    "test_acc_std": statistics.stdev(acc) if len(acc) > 1 else 0.0,
                    "epoch_ms": 1000 * statistics.mean(t)})
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(summary[0]))
    w.writeheader()
    w.writerows(summary)
print(f"{'dataset':<10} {'precision':<9} {'seeds':>5} {'test acc %':>16} {'epoch ms':>9} {'vs fp32':>16}")
for r in summary:
    base = next((b for b in summary if b["dataset"] == r["dataset"] and b["precision"] == "fp32"), None)
    vs = "" if base is None or r is base else \
        f"{r['test_acc_mean'] - base['test_acc_mean']:+.2f} pt, {r['epoch_ms'] / base['epoch_ms']:.2f}x"
    print(f"{r['dataset']:<10} {r['precision']:<9} {r['seeds']:>5} "
          f"{r['test_acc_mean']:>9.2f} ± {r['test_acc_std']:<4.2f} {r['epoch_ms']:>9.2f} {vs:>16}")
PY
