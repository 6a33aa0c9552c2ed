#!/usr/bin/env bash
# output.predictions end-to-end: `mpirun -np 2 adaqp train` on GraphSAINT directories written by
# NumPy (single- and multi-label, 240 nodes) leaves predictions.npy, and NumPy, from that file and
# the dataset's own class_map.json and role.json, recomputes the last epoch's train, validation
# and test scores (accuracy, F1-micro) that the binary reported: every node's row must sit at its
# id. Two epochs, so that the scores are short of 1 and come from the final parameters. A later
# run without the key, on 3 workers, removes the file (it would not be that run's) and what a
# killed writer would have left of one; that run, finished, resumed with the key (`--resume --set
# output.predictions=true`) trains nothing, writes the predictions of its last epoch and leaves
# its metrics.jsonl and params.bin as they were.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
require_numpy
# shellcheck source=tests/cli/lib/graphsaint_dataset.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/graphsaint_dataset.sh"

# train KIND RANKS ARGS...: 2 epochs on $tmp/KIND into $tmp/run-KIND.
train() {
  local kind=$1 ranks=$2
  shift 2
  timeout 300 mpirun --oversubscribe --bind-to none -np "$ranks" "$ADAQP_BIN" train \
    --set "dataset.path=$tmp/$kind" --set "partition.parts=$ranks" \
    --set "partition.dir=$tmp/part-$kind-$ranks" --set training.epochs=2 \
    --set training.threads=1 --set "output.dir=$tmp/run-$kind" "$@" >"$tmp/train-$kind.log" 2>&1 ||
    { cat "$tmp/train-$kind.log"; fail "adaqp train on the $kind-label directory ($ranks ranks)"; }
}

# scores KIND RUN: predictions.npy of RUN against the last epoch's scores of its metrics.jsonl.
scores() {
  "$PYTHON" - "$tmp/$1" "$2" "$1" <<'PY'
import json, sys
import numpy as np

data, run, kind = sys.argv[1:]
pred = np.load(f"{run}/predictions.npy")
labels = json.load(open(f"{data}/class_map.json"))
roles = json.load(open(f"{data}/role.json"))
n, c = len(labels), 4
truth = np.array([labels[str(v)] for v in range(n)])
if kind == "single":
    assert pred.dtype == np.int64 and pred.shape == (n,), (pred.dtype, pred.shape)
    assert pred.min() >= 0 and pred.max() < c and len(set(pred.tolist())) >= 2, pred
    score = lambda ids: float(np.mean(pred[ids] == truth[ids]))
else:
    assert pred.dtype == np.uint8 and pred.shape == (n, c), (pred.dtype, pred.shape)
    assert set(np.unique(pred).tolist()) == {0, 1}, np.unique(pred)
    def score(ids):
        p, t = pred[ids] == 1, truth[ids] == 1
        tp, fp, fn = (p & t).sum(), (p & ~t).sum(), (~p & t).sum()
        return float(2 * tp / (2 * tp + fp + fn))
records = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
last = [r for r in records if r.get("epoch") == 2 and r.get("rank") == 0 and "event" not in r]
assert len(last) == 1, last
assert min(last[0][k] for k in ("train_acc", "val_acc", "test_acc")) < 1, last
for role, key in (("tr", "train_acc"), ("va", "val_acc"), ("te", "test_acc")):
    ours, theirs = score(np.array(roles[role])), last[0][key]
    assert abs(ours - theirs) < 1e-12, f"{kind} {key}: {ours} from predictions.npy, {theirs} reported"
print(f"ok: {kind}: predictions.npy {pred.dtype} {pred.shape} gives the reported scores "
      f"{[last[0][k] for k in ('train_acc', 'val_acc', 'test_acc')]}")
PY
}

for kind in single multi; do
  make_graphsaint_dataset "$tmp/$kind" "$kind"
  train "$kind" 2 --set output.predictions=true
  grep -qx "predictions: $tmp/run-$kind/predictions.npy" "$tmp/train-$kind.log" ||
    { cat "$tmp/train-$kind.log"; fail "$kind: the summary does not name predictions.npy"; }
  scores "$kind" "$tmp/run-$kind"
done

touch "$tmp/run-single/predictions.npy.tmp-99999"
train single 3 --set training.checkpoint_every=1
[[ -z $(find "$tmp/run-single" -name 'predictions.npy*') ]] ||
  fail "a run without output.predictions kept $(find "$tmp/run-single" -name 'predictions.npy*')"
! grep -q "^predictions: " "$tmp/train-single.log" || fail "a run without predictions names a file"
echo "ok: a later run without output.predictions removes the earlier run's predictions.npy and a"\
  "temporary file of one"

cp "$tmp/run-single/metrics.jsonl" "$tmp/run-single/params.bin" "$tmp/run-single/config.yaml" "$tmp"
train single 3 --set training.checkpoint_every=1 --set output.predictions=true --resume
grep -q "training had finished at epoch 2: nothing trained" "$tmp/train-single.log" ||
  { cat "$tmp/train-single.log"; fail "the finished run's resume does not say it trained nothing"; }
if ! cmp "$tmp/metrics.jsonl" "$tmp/run-single/metrics.jsonl" ||
  ! cmp "$tmp/params.bin" "$tmp/run-single/params.bin" ||
  ! cmp "$tmp/config.yaml" "$tmp/run-single/config.yaml"; then
  fail "resuming the finished run for its predictions changed metrics.jsonl, params.bin or config.yaml"
fi
scores single "$tmp/run-single"
echo "ok: the finished run, resumed with output.predictions, wrote them and trained nothing"
