#!/usr/bin/env bash
# GraphSAGE's test accuracy at the best validation epoch, Vanilla, one worker, one thread, seeds
# 0-2: the shared datasets with their configs (2 layers, 200 epochs) and the default generated
# graph (5,000 nodes, 3 layers, 30 and 100 epochs). Usage: measure.sh ADAQP_BIN LABEL OUT_JSONL
# (run from the repository root, ../shared/datasets beside it).
set -euo pipefail
bin=$1 label=$2 out=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # run CASE SEED ARGS...
  local case=$1 seed=$2
  shift 2
  mpirun --oversubscribe --bind-to none -np 1 "$bin" train --set partition.parts=1 \
    --set model.type=sage --set communication.mode=vanilla --set training.threads=1 \
    --set training.seed="$seed" --set output.dir="$tmp/run" --set output.log_level=warn \
    --set partition.dir="$tmp/part-$case" "$@" >/dev/null
  python3 -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rec, epochs = recs[-1], [r for r in recs if "loss" in r and "epoch_time_s" in r]
print(json.dumps({"label": sys.argv[2], "case": sys.argv[3], "seed": int(sys.argv[4]),
                  "test_acc_at_best_val": rec["test_acc_at_best_val"],
                  "best_epoch": rec["best_epoch"], "loss_epoch_1": epochs[0]["loss"],
                  "loss_last_epoch": epochs[-1]["loss"]}))' \
    "$tmp/run/metrics.jsonl" "$label" "$case" "$seed" | tee -a "$out"
  rm -rf "$tmp/run"
}
for seed in 0 1 2; do
  for ds in cora citeseer amazon-photo; do
    run "$ds" "$seed" --config "configs/$ds.yaml"
  done
  run generated-30 "$seed" --set training.epochs=30 --set dataset.synthetic.num_nodes=5000
  run generated-100 "$seed" --set training.epochs=100 --set dataset.synthetic.num_nodes=5000
done
