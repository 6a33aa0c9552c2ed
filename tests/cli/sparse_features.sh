#!/usr/bin/env bash
# Layer 0 over sparse inputs (training.sparse_features, model/sparse_features.h) trains what the
# dense inputs train. Cora (bag-of-words features: about 5% of A X non-zero) with its config
# (dropout 0.5 on layer 0's input), 2 workers, Vanilla, each model once with the sparse products
# and once without: GCN (A X) and GraphSAGE (A X and its root term's X) for 30 epochs, GAT (X, 2
# heads, hidden 16) for 10. Every rank reports a sparse input in the first run of each pair and
# none in the second (the summary's sparse_features_ranks), and every epoch's loss agrees within
# 1e-5 relative (only the summation order differs: 1e-7 here; a mask read at a wrong element
# moves epoch 2's loss by 1e-3 or more). Skips visibly when the shared datasets are missing (fails
# when CI=true).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=tests/cli/lib/shared_datasets.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/shared_datasets.sh"
require_shared_datasets cora
export OMP_NUM_THREADS=1

# run NAME ARGS...: trains into $tmp/NAME; ends the test on failure with the log.
run() {
  local name=$1
  shift
  if ! timeout 300 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train \
      --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" --set "dataset.path=$ADAQP_SHARED_DATASETS/cora" \
      --set "partition.dir=$tmp/part" --set "output.dir=$tmp/$name" \
      --set training.threads=1 --set training.device=cpu --set communication.mode=vanilla \
      --set output.log_level=info "$@" >"$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log"
    echo "FAIL: $name" >&2
    exit 1
  fi
}
declare -A model_args=([gcn]="--set model.type=gcn --set training.epochs=30"
                       [sage]="--set model.type=sage --set training.epochs=30"
                       [gat]="--set model.type=gat --set model.heads=2 --set training.epochs=10")
for model in gcn sage gat; do
  # shellcheck disable=SC2086  # the model's arguments are words to split
  run "$model-sparse" ${model_args[$model]}
  # shellcheck disable=SC2086
  run "$model-dense" ${model_args[$model]} --set training.sparse_features=false
done
grep "layer 0 reads its input sparse" "$tmp/sage-sparse.log"

python3 - "$tmp" <<'PY'
import json, sys

tmp = sys.argv[1]

def records(name):
    with open(f"{tmp}/{name}/metrics.jsonl") as f:
        return [json.loads(line) for line in f]

def summary(name):
    s = [r for r in records(name) if r.get("event") == "summary"]
    assert len(s) == 1, s
    return s[0]

def losses(name):
    return [r["loss"] for r in records(name) if "loss" in r and r.get("rank") == 0]

failed = []
def check(ok, text):
    print(f"{'ok' if ok else 'FAIL'}: {text}")
    if not ok:
        failed.append(text)

for model, epochs in (("gcn", 30), ("sage", 30), ("gat", 10)):
    for mode, want in (("sparse", 2), ("dense", 0)):
        got = summary(f"{model}-{mode}")["sparse_features_ranks"]
        check(got == want, f"{model} {mode}: {got} ranks read a sparse input (expected {want})")
    sparse, dense = losses(f"{model}-sparse"), losses(f"{model}-dense")
    worst = max(abs(a - b) / abs(b) for a, b in zip(sparse, dense))
    check(len(sparse) == len(dense) == epochs and worst <= 1e-5,
          f"{model}: losses of {epochs} epochs agree: largest relative difference {worst:.2e} "
          f"(limit 1e-5); last: {sparse[-1]:.6f} sparse, {dense[-1]:.6f} dense")
assert not failed, f"failed: {failed}"
PY
