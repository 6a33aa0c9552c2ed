#!/usr/bin/env bash
# Accuracy on the ogbn-mag-shaped planted-label graph (issue 41): each model of MODELS trained on
# the generator's typed graph (reverse relations, per-type self-loops; the homogeneous layers, gcn
# and sage, read its homogeneous view, the relation-blind baseline; rgcn each relation on its own,
# rgcn-first the same over communication.exchange=relation_first),
# in each communication mode of MODES at W workers, SEEDS seeds; per model and mode the mean and
# spread of the test accuracy at the best validation epoch. The generator's defaults
# (feature_signal 1) make the papers' class readable from their features and neighbours alone
# (homogeneous GCN 99.1%, 2026-11-28); FEATURE_SIGNAL 0.3 leaves the relations work to do.
#
# Usage: benchmarks/hetero/accuracy.sh [WORK_DIR]   (default runs/hetero-accuracy)
# Environment [defaults]: ADAQP_BIN or ADAQP_BUILD_DIR [build], NODES [100000], CLASSES [16],
#   FEAT [128], AVG_DEGREE [10], FEATURE_SIGNAL [0.3], HOMOPHILY [0.8], MODELS ["gcn sage rgcn"],
#   MODES ["vanilla"], SEEDS ["1 2 3"], W [2], EPOCHS [200], HIDDEN [64], FEATURELESS [zeros]
#   (rgcn's model.featureless: zeros or embedding), ADAQP_SETS [""] (KEY=VALUE pairs for the runs
#   of mode adaqp, e.g. communication.objective=normalized, the paper's objective, which
#   quantizes where the default keeps a fast link at full precision).
# Writes WORK_DIR/results.jsonl (one line per run) and WORK_DIR/summary.md, and prints the summary.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
work=${1:-$ADAQP_ROOT/runs/hetero-accuracy}
read -r -a models <<<"${MODELS:-gcn sage rgcn}"
read -r -a modes <<<"${MODES:-vanilla}"
read -r -a adaqp_sets <<<"${ADAQP_SETS:-}"
read -r -a seeds <<<"${SEEDS:-1 2 3}"
workers=${W:-2}
require_adaqp
mkdir -p "$work"
results=$work/results.jsonl
: >"$results"
python3 "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"

runs=()
for model in "${models[@]}"; do
  for mode in "${modes[@]}"; do
    for seed in "${seeds[@]}"; do runs+=("$model $mode $seed"); done
  done
done
for r in "${runs[@]}"; do
  read -r model mode seed <<<"$r"
  run=$work/$model-$mode-w$workers-s$seed
  type=${model%-first}
  extra=()
  if [[ $type == rgcn ]]; then
    extra=(--set "model.featureless=${FEATURELESS:-zeros}")
    run=$work/$model-${FEATURELESS:-zeros}-$mode-w$workers-s$seed
  fi
  if [[ $type == rgcn ]]; then
    exchange=rows
    [[ $model != *-first ]] || exchange=relation_first
    extra+=(--set "communication.exchange=$exchange")
  fi
  if [[ $mode == adaqp ]] && ((${#adaqp_sets[@]})); then
    mapfile -t -O "${#extra[@]}" extra < <(set_pairs "${adaqp_sets[@]}")
  fi
  log "$model, $mode, W=$workers, seed $seed"
  mapfile -t job < <(synthetic_graph "${NODES:-100000}" heterogeneous=true \
    "num_classes=${CLASSES:-16}" "feat_dim=${FEAT:-128}" "avg_degree=${AVG_DEGREE:-10}" \
    "feature_signal=${FEATURE_SIGNAL:-0.3}" "homophily=${HOMOPHILY:-0.8}"
    gnn_model 2 "${HIDDEN:-64}"
    set_pairs "model.type=$type" dataset.add_reverse=true "communication.mode=$mode" \
      "partition.parts=$workers" "partition.dir=$work/partition-w$workers" \
      "training.epochs=${EPOCHS:-200}" training.eval_every=5 "training.seed=$seed" \
      training.threads=1 output.log_level=warn "output.dir=$run")
  mpirun --oversubscribe --bind-to none -np "$workers" "$ADAQP_BIN" train "${job[@]}" "${extra[@]}" \
    >"$run.log" 2>&1 || { tail -n 20 "$run.log" >&2; die "$model, $mode, seed $seed failed"; }
  label=$model
  [[ $type != rgcn ]] || label="$model (featureless ${FEATURELESS:-zeros})"
  python3 - "$run/metrics.jsonl" "$label" "$mode" "$seed" "$workers" >>"$results" <<'PY'
import json, sys
summary = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
print(json.dumps({"model": sys.argv[2], "mode": sys.argv[3], "seed": int(sys.argv[4]),
                  "workers": int(sys.argv[5]), "best_val_acc": summary["best_val_acc"],
                  "test_acc_at_best_val": summary["test_acc_at_best_val"],
                  "epoch_s": summary["mean_epoch_time_s"]}))
PY
done

python3 - "$results" "$work/summary.md" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
lines = ["| model | mode | W | seeds | test accuracy at best validation, mean +- std (%) | per seed "
         "| epoch s |", "|---|---|---|---|---|---|---|"]
for model, mode in dict.fromkeys((r["model"], r["mode"]) for r in runs):
    rs = [r for r in runs if r["model"] == model and r["mode"] == mode]
    acc = [100 * r["test_acc_at_best_val"] for r in rs]
    spread = statistics.stdev(acc) if len(acc) > 1 else 0.0
    lines.append("| %s | %s | %d | %d | %.2f +- %.2f | %s | %.3f |" % (
        model, mode, rs[0]["workers"], len(acc), statistics.mean(acc), spread,
        " / ".join("%.2f" % a for a in acc), statistics.median(r["epoch_s"] for r in rs)))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
