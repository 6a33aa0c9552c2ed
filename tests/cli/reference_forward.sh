#!/usr/bin/env bash
# The accuracies `adaqp train` reports, recomputed by something that is not the binary: GCN on Cora
# (configs/cora.yaml) trained on 2 workers, then a NumPy forward pass in float64 over the final
# parameters (params.bin) and the dataset read from its raw files, with the transforms and the
# GCN normalisation written out here from their definitions (docs/design.md, section 3;
# docs/configuration.md): symmetrize and drop duplicate edges, exactly one self-loop per node,
# features divided by their row sum, a_ij = 1 / sqrt(deg(i) deg(j)). The train, validation and
# test accuracies of the last epoch's record must match the reference's within one node of each
# split (ties between float32 and float64 logits), so evaluating on the wrong split, a wrong
# normalisation or parameters that are not the final ones fail; the validation loss (val_loss,
# cross-entropy over the validation nodes) must match the reference's within 1e-5, relative. The
# run's predictions.npy
# (output.predictions) must hold the reference's class for every node whose two largest logits are
# more than 1e-4 apart (and such nodes must be at least 95% of them).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=tests/cli/lib/shared_datasets.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/shared_datasets.sh"
require_shared_datasets cora
require_numpy
cora="$ADAQP_SHARED_DATASETS/cora"

timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train \
  --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" --set "dataset.path=$cora" \
  --set partition.parts=2 --set "output.dir=$tmp/run" --set training.epochs=30 \
  --set training.threads=1 --set training.device=cpu --set communication.mode=vanilla \
  --set output.log_level=warn --set output.predictions=true >"$tmp/train.log" 2>&1 ||
  { cat "$tmp/train.log"; exit 1; }

"$PYTHON" - "$cora" "$tmp/run" <<'PY'
import csv, gzip, json, sys
import numpy as np

cora, run = sys.argv[1], sys.argv[2]

def rows(path):
    with gzip.open(path, "rt") as f:
        return [r for r in csv.reader(f) if r]

n = int(rows(f"{cora}/raw/num-node-list.csv.gz")[0][0])
edges = {(int(s), int(d)) for s, d in rows(f"{cora}/raw/edge.csv.gz")}
edges |= {(d, s) for s, d in edges}                       # symmetrize, duplicates dropped
edges = {(s, d) for s, d in edges if s != d} | {(v, v) for v in range(n)}  # one self-loop each
x = np.array(rows(f"{cora}/raw/node-feat.csv.gz"), dtype=np.float32)
sums = np.abs(x.astype(np.float64)).sum(axis=1, keepdims=True)  # unit L1 norm
x = np.where(sums != 0, (x / np.where(sums == 0, 1, sums)).astype(np.float32), x).astype(np.float64)
labels = np.array([int(r[0]) for r in rows(f"{cora}/raw/node-label.csv.gz")])
split = {s: np.array([int(r[0]) for r in rows(f"{cora}/split/public/{s}.csv.gz")])
         for s in ("train", "valid", "test")}

src = np.array([s for s, _ in edges])
dst = np.array([d for _, d in edges])
deg = np.bincount(dst, minlength=n).astype(np.float64)    # in-degree = out-degree (symmetric)
weight = 1.0 / np.sqrt(deg[dst] * deg[src])

def aggregate(h):                                          # y_i = sum_j a_ij h_j over j -> i
    y = np.zeros_like(h)
    np.add.at(y, dst, weight[:, None] * h[src])
    return y

# params.bin: float32, registration order: layer0 W (16 x F), b (16), layer1 W (C x 16), b (C);
# params.json must say so, and its offsets slice the file.
p = np.fromfile(f"{run}/params.bin", dtype="<f4").astype(np.float64)
f, hidden, c = x.shape[1], 16, int(labels.max()) + 1
layout = json.load(open(f"{run}/params.json"))
expected = [("layer0_neighbour.weight", [hidden, f]), ("layer0_neighbour.bias", [hidden]),
            ("layer1_neighbour.weight", [c, hidden]), ("layer1_neighbour.bias", [c])]
assert [(q["name"], q["shape"]) for q in layout["parameters"]] == expected, layout
assert layout["dtype"] == "<f4" and layout["values"] == p.size, layout
params = [p[q["offset"]:q["offset"] + int(np.prod(q["shape"]))].reshape(q["shape"])
          for q in layout["parameters"]]
assert sum(a.size for a in params) == p.size, f"params.bin holds {p.size} values, the model {sum(a.size for a in params)}"
w0, b0, w1, b1 = params
h = np.maximum(aggregate(x) @ w0.T + b0, 0.0)
logits = aggregate(h @ w1.T) + b1
pred = logits.argmax(axis=1)
ref = {s: float((pred[idx] == labels[idx]).mean()) for s, idx in split.items()}

records = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
last = [r for r in records if r.get("epoch") == 30 and "event" not in r and "test_acc" in r]
assert last, "no evaluated record of epoch 30"
summary = [r for r in records if r.get("event") == "summary"][0]
for r in last:
    for key, s in (("train_acc", "train"), ("val_acc", "valid"), ("test_acc", "test")):
        tol = 1.0 / len(split[s]) + 1e-9
        assert abs(r[key] - ref[s]) <= tol, \
            f"rank {r['rank']} {key} {r[key]:.4f}, NumPy reference {ref[s]:.4f} (tolerance {tol:.4f})"
assert abs(summary["final_test_acc"] - ref["test"]) <= 1.0 / len(split["test"]) + 1e-9, summary
shifted = logits - logits.max(axis=1, keepdims=True)
log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
valid = split["valid"]
val_loss = float(-log_softmax[valid, labels[valid]].mean())
for r in last:
    assert abs(r["val_loss"] - val_loss) <= 1e-5 * val_loss, \
        f"rank {r['rank']} val_loss {r['val_loss']:.8f}, NumPy reference {val_loss:.8f}"
# predictions.npy: the class of every node, in node id order, as NumPy's forward gives it wherever
# its two largest logits are apart by more than the summation order could move them.
written = np.load(f"{run}/predictions.npy")
assert written.dtype == np.int64 and written.shape == (n,), (written.dtype, written.shape)
top2 = np.sort(logits, axis=1)[:, -2:]
clear = top2[:, 1] - top2[:, 0] > 1e-4
differ = np.flatnonzero(clear & (written != pred))
assert clear.sum() > 0.95 * n and differ.size == 0, \
    f"predictions.npy differs from NumPy's forward at nodes {differ[:10]} ({clear.sum()} clear of {n})"
print(f"reference_forward: predictions.npy is NumPy's argmax at all {clear.sum()} of {n} nodes "
      "with a clear largest logit")
print(f"reference_forward: train/val/test accuracy {ref['train']:.4f}/{ref['valid']:.4f}/"
      f"{ref['test']:.4f} recomputed in NumPy match the reported "
      f"{last[0]['train_acc']:.4f}/{last[0]['val_acc']:.4f}/{last[0]['test_acc']:.4f}, validation "
      f"loss {val_loss:.6f} against the reported {last[0]['val_loss']:.6f}")
PY
