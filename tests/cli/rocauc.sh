#!/usr/bin/env bash
# training.metric = rocauc, checked by something that is not the binary: GCN trained on 2 workers
# on a generated multi-label dataset (NumPy layout: 6 tasks, the last without a positive outside
# the training split, so left out of the validation and test means), then a NumPy forward pass in
# float64 over the final parameters (params.bin) and each split's mean over tasks of the pairwise
# ROC-AUC (a positive above a negative 1, a tie 1/2). The last epoch's reported scores must match
# within 1e-3 (pairs whose float32 and float64 logits order differently), the summary must name the
# metric, a resume with another metric (named, or auto) is refused (the checkpoint's best score is a
# ROC-AUC), a metric the labels do not fit stops the job before it partitions (METIS and
# PT-Scotch), on every rank, and a validation split without a task of both classes is warned of
# (refused with training.patience).
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

"$PYTHON" - "$tmp/data" "$tmp/run" "$(dirname "${BASH_SOURCE[0]}")/lib" <<'PY'
import sys
import numpy as np

data, run = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from gcn_rocauc import check_run, gcn_logits

edges = np.load(f"{data}/edge_index.npy")
x = np.load(f"{data}/feat.npy").astype(np.float64)
labels = np.load(f"{data}/label.npy")
split = {s: np.load(f"{data}/{s}.npy") for s in ("train", "valid", "test")}
n, tasks = x.shape[0], labels.shape[1]
src = np.concatenate([edges[0], np.arange(n)])            # one self-loop per node
dst = np.concatenate([edges[1], np.arange(n)])
logits = gcn_logits(x, src, dst, f"{run}/params.bin", tasks)
ref = check_run("rocauc", run, 50, logits, labels, split, workers=2, min_test=0.7)
assert ref["train"][1] == tasks and ref["valid"][1] == tasks - 1 and ref["test"][1] == tasks - 1, ref
PY

# The checkpoint's best score is a ROC-AUC: another metric must not continue from it, refused before
# --repartition replaces the partition (the directory is the same one after).
partition_inode=$(stat -c %i "$tmp/run/partition")
expect_failure resume_with_f1 2 "training.metric: checkpoint has rocauc, this job has f1_micro" \
  "${common[@]}" --set training.metric=f1_micro --set training.epochs=60 \
  --set "output.dir=$tmp/run" --resume --repartition
[[ $(stat -c %i "$tmp/run/partition") == "$partition_inode" ]] ||
  fail "the refused resume replaced the partition"
# training.metric auto (f1_micro on these labels) is known only once the labels are read: still
# refused before the partition is replaced.
expect_failure resume_with_auto 2 "training.metric: checkpoint has rocauc, this job has f1_micro" \
  "${common[@]}" --set training.epochs=60 --set "output.dir=$tmp/run" --resume --repartition
[[ $(stat -c %i "$tmp/run/partition") == "$partition_inode" ]] ||
  fail "the refused resume (metric auto) replaced the partition"
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
# The same with PT-Scotch, where every rank reads a slice: refused before the ranks partition.
expect_failure rocauc_on_class_ids_ptscotch 2 \
  "training.metric = rocauc scores multi-label data (0/1 per class), and the dataset's labels are class ids" \
  "${common[@]}" --set "dataset.path=$tmp/single" --set training.metric=rocauc \
  --set partition.method=ptscotch --set "output.dir=$tmp/single-ptscotch"
[[ ! -e "$tmp/single-ptscotch/partition" ]] || fail "the refused PT-Scotch job left a partition"

# No task with both classes among the validation nodes (every validation label 0): the validation
# ROC-AUC reads 0 every epoch. Early stopping on it is refused, as without validation nodes; without
# early stopping the job trains and says so once (it said nothing: found by a bad-input hunt).
"$PYTHON" - "$tmp/data" "$tmp/valid-negative" <<'PY'
import shutil, sys
import numpy as np
shutil.copytree(sys.argv[1], sys.argv[2])
labels = np.load(f"{sys.argv[1]}/label.npy")
labels[np.load(f"{sys.argv[1]}/valid.npy")] = 0
np.save(f"{sys.argv[2]}/label.npy", labels)
PY
expect_failure rocauc_patience_without_defined_tasks 2 \
  "training.patience = 3: chooses an epoch by its validation score, and no task holds both classes among the dataset's 60 validation nodes" \
  "${common[@]}" --set "dataset.path=$tmp/valid-negative" --set training.metric=rocauc \
  --set training.patience=3 --set "output.dir=$tmp/valid-negative-run"
timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${common[@]}" \
  --set "dataset.path=$tmp/valid-negative" --set training.metric=rocauc --set training.epochs=2 \
  --set "output.dir=$tmp/valid-negative-run" >"$tmp/valid-negative.log" 2>&1 ||
  { cat "$tmp/valid-negative.log"; fail "the job without defined validation tasks failed"; }
warning="no task holds both classes among the dataset's 60 validation nodes: their ROC-AUC"
if (($(grep -c "warn.*$warning" "$tmp/valid-negative.log") != 1)) ||
    grep -q "training nodes: their\|test nodes: their" "$tmp/valid-negative.log"; then
  cat "$tmp/valid-negative.log"
  fail "expected one warning of the validation split alone"
fi
echo "rocauc: passed"
