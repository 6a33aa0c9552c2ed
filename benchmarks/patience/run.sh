#!/usr/bin/env bash
# What early stopping (training.patience) saves and costs on the shared datasets. For each dataset
# and seed, one `adaqp train` of the dataset's config (configs/<dataset>.yaml: 200 epochs,
# evaluation every epoch), Vanilla, on W=1 with one thread, gives the whole validation curve. A run
# with patience P is that run's records up to its stop (tests/cli/best_epoch.sh), so for every P of
# PATIENCES the stop epoch, the best epoch and the test score at the best validation score follow
# from the curve exactly; one real run with patience per dataset (seed 0, the first P) checks that
# reading against the binary.
#
# Usage: benchmarks/patience/run.sh [WORK_DIR]   (default runs/patience)
# Environment: ADAQP_BIN (build/src/adaqp), DATASETS ("cora citeseer amazon-photo"), SEEDS (3),
#   PATIENCES ("10 20 50 100"), ADAQP_SHARED_DATASETS (../shared/datasets).
# Writes provenance.json, each run's folder (metrics.jsonl, the log), summary.json and summary.md
# (also printed).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
work=${1:-$ADAQP_ROOT/runs/patience}
shared=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
read -r -a datasets <<<"${DATASETS:-cora citeseer amazon-photo}"
read -r -a patiences <<<"${PATIENCES:-10 20 50 100}"
seeds=${SEEDS:-3}
((seeds >= 1)) || die "SEEDS must be at least 1, got $seeds"
((${#patiences[@]} >= 1)) || die "PATIENCES is empty"
require_adaqp
for ds in "${datasets[@]}"; do
  [[ -d $shared/$ds/raw ]] || die "dataset $ds missing at $shared/$ds"
done
mkdir -p "$work"
python3 "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"
export OMP_NUM_THREADS=1

# train DATASET NAME ARGS...: one run into $work/DATASET/NAME.
train() {
  local ds=$1 name=$2
  shift 2
  local out=$work/$ds/$name
  log "$ds $name"
  mpirun --oversubscribe --bind-to none -np 1 "$ADAQP_BIN" train \
    --config "$ADAQP_ROOT/configs/$ds.yaml" --set "dataset.path=$shared/$ds" \
    --set partition.parts=1 --set "partition.dir=$work/$ds/partition" --set "output.dir=$out" \
    --set training.threads=1 \
    --set training.device=cpu \
    --set communication.mode=vanilla --set output.log_level=warn "$@" >"$out.log" 2>&1 ||
    { cat "$out.log" >&2; die "$ds $name failed"; }
}

for ds in "${datasets[@]}"; do
  mkdir -p "$work/$ds"
  for ((seed = 0; seed < seeds; ++seed)); do
    train "$ds" "full-s$seed" --set "training.seed=$seed"
  done
  train "$ds" "patience${patiences[0]}-s0" --set training.seed=0 \
    --set "training.patience=${patiences[0]}"
done

python3 - "$work" "$seeds" "${patiences[*]}" "${datasets[@]}" <<'PY'
import json, statistics, sys

work, seeds, patiences, datasets = sys.argv[1], int(sys.argv[2]), \
    [int(p) for p in sys.argv[3].split()], sys.argv[4:]

def records(path):
    rows = [json.loads(l) for l in open(f"{path}/metrics.jsonl")]
    return [r for r in rows if "event" not in r], \
        [r for r in rows if r.get("event") == "summary"][-1]

def stop(epochs, patience):
    """The stop epoch, best epoch and test score at it by training.patience's rule (every epoch
    evaluated); patience 0 trains every epoch."""
    best_epoch, best = None, None
    for r in epochs:
        if best is None or r["val_acc"] > best:
            best_epoch, best, test = r["epoch"], r["val_acc"], r["test_acc"]
        if patience and r["epoch"] - best_epoch >= patience and r["epoch"] < epochs[-1]["epoch"]:
            return r["epoch"], best_epoch, test
    return epochs[-1]["epoch"], best_epoch, test

summary, lines = {}, []
lines.append("| dataset | patience | epochs trained (mean, range) | training time | "
             "test acc at best val, mean % | seeds whose score changed |")
lines.append("|---|---|---|---|---|---|")
for ds in datasets:
    runs = [records(f"{work}/{ds}/full-s{s}") for s in range(seeds)]
    full = [stop(epochs, 0) for epochs, _ in runs]
    for (epochs, s), (last, best_epoch, test) in zip(runs, full):
        assert s["epochs"] == last and s["best_epoch"] == best_epoch and \
            s["test_acc_at_best_val"] == test, (ds, s)
    # The real run with patience against the reading of seed 0's curve.
    epochs0, _ = runs[0]
    _, real = records(f"{work}/{ds}/patience{patiences[0]}-s0")
    want = stop(epochs0, patiences[0])
    assert (real["epochs"], real["best_epoch"], real["test_acc_at_best_val"]) == want, (real, want)
    summary[ds] = {}
    for p in [0] + patiences:
        got = [stop(epochs, p) for epochs, _ in runs]
        seconds = [sum(r["epoch_time_s"] for r in epochs if r["epoch"] <= g[0])
                   for (epochs, _), g in zip(runs, got)]
        total = [sum(r["epoch_time_s"] for r in epochs) for epochs, _ in runs]
        acc = [100 * g[2] for g in got]
        changed = sum(1 for g, f in zip(got, full) if g[2] != f[2])
        summary[ds][p] = {"stop_epochs": [g[0] for g in got], "best_epochs": [g[1] for g in got],
                          "test_acc_at_best_val": acc,
                          "training_time_share": sum(seconds) / sum(total)}
        lines.append(f"| {ds} | {p or 'off'} | {statistics.mean(g[0] for g in got):.0f} "
                     f"({min(g[0] for g in got)}-{max(g[0] for g in got)}) | "
                     f"{100 * sum(seconds) / sum(total):.0f}% | {statistics.mean(acc):.2f} | "
                     f"{changed} of {seeds} |")
json.dump(summary, open(f"{work}/summary.json", "w"), indent=1)
text = "\n".join(lines) + "\n"
open(f"{work}/summary.md", "w").write(text)
print(text)
PY
