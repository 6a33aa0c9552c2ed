#!/usr/bin/env bash
# training.metric = rocauc, checked by something that is not the binary: GCN trained on 2 workers
# on a generated multi-label dataset (NumPy layout: 6 tasks, the last without a positive outside
# the training split, so left out of the validation and test means), then a NumPy forward pass in
# float64 over the final parameters (params.bin) and each split's mean over tasks of the pairwise
# ROC-AUC (a positive above a negative 1, a tie 1/2). The last epoch's reported scores must match
# within 1e-3 (pairs whose float32 and float64 logits order differently), the summary must name the
# metric, a resume with another metric is refused (the checkpoint's best score is a ROC-AUC), and a
# metric the labels do not fit stops the job before it partitions, on every rank.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=tests/cli/lib/expect_failure.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect_failure.sh"
require_numpy

"$PYTHON" - "$tmp/data" <<'PY'
import os, sys
import numpy as np

out = sys.argv[1]
os.makedirs(out)
rng = np.random.default_rng(3)
n, f, tasks = 300, 8, 6
x = rng.normal(size=(n, f)).astype(np.float32)
pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(900, 2)) if a != b}
pairs |= {(b, a) for a, b in pairs}                 # symmetric, no duplicates, no self-loops
edges = np.ascontiguousarray(np.array(sorted(pairs), dtype=np.int64).T)
perm = rng.permutation(n)
train, valid, test = perm[:180], perm[180:240], perm[240:]
w = rng.normal(size=(f, tasks))
labels = (x @ w + rng.normal(scale=0.5, size=(n, tasks)) > 0.3).astype(np.uint8)
labels[np.concatenate([valid, test]), tasks - 1] = 0  # the last task: positives in training only
np.save(f"{out}/edge_index.npy", edges)
np.save(f"{out}/feat.npy", x)
np.save(f"{out}/label.npy", labels)
for name, idx in (("train", train), ("valid", valid), ("test", test)):
    np.save(f"{out}/{name}.npy", np.sort(idx).astype(np.int64))
PY

common=(--set "dataset.path=$tmp/data" --set partition.parts=2 --set model.layers=2
  --set model.hidden=16 --set training.epochs=50 --set training.threads=1
  --set training.device=cpu --set communication.mode=vanilla --set output.log_level=warn)
timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${common[@]}" \
  --set training.metric=rocauc --set training.checkpoint_every=25 --set "output.dir=$tmp/run" \
  >"$tmp/train.log" 2>&1 ||
  { cat "$tmp/train.log"; fail "the rocauc job failed"; }

"$PYTHON" - "$tmp/data" "$tmp/run" <<'PY'
import json, sys
import numpy as np

data, run = sys.argv[1], sys.argv[2]
edges = np.load(f"{data}/edge_index.npy")
x = np.load(f"{data}/feat.npy").astype(np.float64)
labels = np.load(f"{data}/label.npy")
split = {s: np.load(f"{data}/{s}.npy") for s in ("train", "valid", "test")}
n, f = x.shape
tasks = labels.shape[1]
src = np.concatenate([edges[0], np.arange(n)])            # one self-loop per node
dst = np.concatenate([edges[1], np.arange(n)])
deg = np.bincount(dst, minlength=n).astype(np.float64)    # in-degree = out-degree (symmetric)
weight = 1.0 / np.sqrt(deg[dst] * deg[src])

def aggregate(h):
    y = np.zeros_like(h)
    np.add.at(y, dst, weight[:, None] * h[src])
    return y

# params.bin: float32, registration order: layer0 W (16 x F), b (16), layer1 W (C x 16), b (C).
p = np.fromfile(f"{run}/params.bin", dtype="<f4").astype(np.float64)
shapes = [(16, f), (16,), (tasks, 16), (tasks,)]
params, at = [], 0
for shape in shapes:
    size = int(np.prod(shape))
    params.append(p[at:at + size].reshape(shape))
    at += size
assert at == p.size, f"params.bin holds {p.size} values, the model {at}"
w0, b0, w1, b1 = params
logits = aggregate(np.maximum(aggregate(x) @ w0.T + b0, 0.0) @ w1.T) + b1

def mean_auc(idx):
    aucs = []
    for t in range(tasks):
        s, y = logits[idx, t], labels[idx, t]
        pos, neg = s[y == 1], s[y == 0]
        if pos.size == 0 or neg.size == 0:
            continue
        diff = pos[:, None] - neg[None, :]
        aucs.append(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)
    return float(np.mean(aucs)), len(aucs)

ref = {s: mean_auc(idx) for s, idx in split.items()}
assert ref["train"][1] == tasks and ref["valid"][1] == tasks - 1 and ref["test"][1] == tasks - 1, ref
records = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
last = [r for r in records if r.get("epoch") == 50 and "event" not in r and "test_acc" in r]
assert len(last) == 2, "no evaluated record of epoch 50 on each rank"
summary = [r for r in records if r.get("event") == "summary"][0]
assert summary["metric"] == "rocauc", summary["metric"]
for r in last:
    for key, s in (("train_acc", "train"), ("val_acc", "valid"), ("test_acc", "test")):
        assert abs(r[key] - ref[s][0]) <= 1e-3, \
            f"rank {r['rank']} {key} {r[key]:.6f}, NumPy reference {ref[s][0]:.6f}"
assert abs(summary["final_test_acc"] - ref["test"][0]) <= 1e-3, summary
# Chance is 0.5: a model that learned nothing, or scores read from the wrong rows, is far off.
assert ref["test"][0] > 0.7, ref
print(f"rocauc: train/val/test ROC-AUC {ref['train'][0]:.4f}/{ref['valid'][0]:.4f}/"
      f"{ref['test'][0]:.4f} recomputed in NumPy ({ref['valid'][1]} of {tasks} tasks defined "
      f"outside training) match the reported {last[0]['train_acc']:.4f}/{last[0]['val_acc']:.4f}/"
      f"{last[0]['test_acc']:.4f}")
PY

# The checkpoint's best score is a ROC-AUC: another metric must not continue from it.
expect_failure resume_with_f1 2 "training.metric: checkpoint has rocauc, this job has f1_micro" \
  "${common[@]}" --set training.metric=f1_micro --set training.epochs=60 \
  --set "output.dir=$tmp/run" --resume
expect_failure accuracy_on_multilabel 2 \
  "training.metric = accuracy scores class ids, and the dataset's labels are multi-label" \
  "${common[@]}" --set training.metric=accuracy --set "output.dir=$tmp/accuracy"
[[ ! -e "$tmp/accuracy/partition" ]] || fail "the refused job left a partition"
"$PYTHON" - "$tmp/data" "$tmp/single" <<'PY'
import shutil, sys
import numpy as np
shutil.copytree(sys.argv[1], sys.argv[2])
np.save(f"{sys.argv[2]}/label.npy", np.load(f"{sys.argv[1]}/label.npy").argmax(axis=1).astype(np.int64))
PY
expect_failure rocauc_on_class_ids 2 \
  "training.metric = rocauc scores multi-label data (0/1 per class), and the dataset's labels are class ids" \
  "${common[@]}" --set "dataset.path=$tmp/single" --set training.metric=rocauc \
  --set "output.dir=$tmp/single-run"
[[ ! -e "$tmp/single-run/partition" ]] || fail "the refused job left a partition"
echo "rocauc: passed"
