#!/usr/bin/env bash
# An ogbn-proteins-shaped job end to end (OGB's CSV layout: each undirected edge listed once with 8
# edge features, no node-feat, multi-label node-label, a "species" split): `dataset.symmetrize`,
# `dataset.features_from_edges: mean` and `training.metric: rocauc`, trained by AdaQP on 2 workers,
# once partitioned by METIS (rank 0 loads the whole graph) and once by PT-Scotch (each rank loads
# a slice). Each run's reported ROC-AUCs are recomputed in NumPy from its params.bin, with the node
# features made here from their definition: each node's mean of the rows of the edges at either of
# its ends (a node without edges: zeros). The same data in the NumPy layout (as PyG exports
# ogbn-proteins: edge_feat.npy from data.edge_attr, no feat.npy), read in slices by PT-Scotch's
# ranks, gives the same graph (its partition's dataset fingerprint) and its scores are recomputed
# likewise. A job asking for edge features of a dataset
# without edge-feat.csv.gz is refused, naming the file.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=tests/cli/lib/expect_failure.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect_failure.sh"
require_numpy

"$PYTHON" - "$tmp/proteins" <<'PY'
import gzip, os, sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)
n, tasks, dim = 400, 6, 8
z = rng.normal(size=(n, dim))
# Homophilous: each node (but the last, left without edges) linked to 4 of its 15 nearest in z.
near = np.argsort(((z[:, None] - z[None]) ** 2).sum(axis=2), axis=1)[:, 1:16]
pairs = {tuple(sorted((v, int(u)))) for v in range(n - 1)
         for u in rng.choice(near[v], 4, replace=False) if u != n - 1}
edges = np.array(sorted(pairs), dtype=np.int64)        # each undirected edge once
feat = np.clip(0.5 + 0.2 * (z[edges[:, 0]] + z[edges[:, 1]]) + rng.normal(scale=0.1, size=(len(edges), dim)), 0, 1)
feat = np.round(feat, 6).astype(np.float32)   # written as the shortest decimals that read back to these
labels = (z @ rng.normal(size=(dim, tasks)) > 0.5).astype(np.int64)
perm = rng.permutation(n)

def write(name, rows):
    path = f"{out}/{name}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        f.writelines(",".join(str(v) for v in np.atleast_1d(r)) + "\n" for r in rows)

write("raw/edge.csv.gz", edges)
write("raw/edge-feat.csv.gz", [[np.format_float_positional(v, unique=True) for v in r] for r in feat])
write("raw/node-label.csv.gz", labels)
write("raw/num-node-list.csv.gz", [n])
write("raw/num-edge-list.csv.gz", [len(edges)])
os.makedirs(f"{out}-npy")
np.save(f"{out}-npy/edge_index.npy", edges.T.copy())
np.save(f"{out}-npy/edge_feat.npy", feat)
np.save(f"{out}-npy/label.npy", labels)                # int64 0/1, as PyG's data.y
for name, idx in (("train", perm[:240]), ("valid", perm[240:320]), ("test", perm[320:])):
    write(f"split/species/{name}.csv.gz", np.sort(idx))
    np.save(f"{out}-npy/{name}.npy", np.sort(idx))
PY

common=(--set "dataset.path=$tmp/proteins" --set dataset.symmetrize=true
  --set dataset.features_from_edges=mean --set training.metric=rocauc --set partition.parts=2
  --set model.layers=2 --set model.hidden=16 --set training.epochs=40 --set training.lr=0.05
  --set training.threads=1
  --set training.device=cpu --set output.log_level=warn)
for method in metis ptscotch; do
  timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${common[@]}" \
    --set "partition.method=$method" --set "output.dir=$tmp/$method" >"$tmp/$method.log" 2>&1 ||
    { cat "$tmp/$method.log"; fail "the $method job failed"; }
done
timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${common[@]}" \
  --set "dataset.path=$tmp/proteins-npy" --set partition.method=ptscotch \
  --set "output.dir=$tmp/numpy" >"$tmp/numpy.log" 2>&1 ||
  { cat "$tmp/numpy.log"; fail "the NumPy layout's job failed"; }
fingerprint() { sed -n 's/^dataset_fingerprint: //p' "$1/partition/meta.yaml"; }
[[ $(fingerprint "$tmp/numpy") == "$(fingerprint "$tmp/ptscotch")" ]] ||
  fail "the NumPy layout gave another graph than the CSV layout's"

"$PYTHON" - "$tmp/proteins" "$tmp" "$(dirname "${BASH_SOURCE[0]}")/lib" <<'PY'
import csv, gzip, sys
import numpy as np

data, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from gcn_rocauc import check_run, gcn_logits

def rows(name, kind):
    with gzip.open(f"{data}/{name}", "rt") as f:
        return np.array([r for r in csv.reader(f) if r], dtype=kind)

edges = rows("raw/edge.csv.gz", np.int64)
feat = rows("raw/edge-feat.csv.gz", np.float64)
labels = rows("raw/node-label.csv.gz", np.int64)
n = int(rows("raw/num-node-list.csv.gz", np.int64)[0, 0])
split = {s: rows(f"split/species/{s}.csv.gz", np.int64)[:, 0] for s in ("train", "valid", "test")}
# Node features: the mean of the rows of the edges at either end of the node.
sums, counts = np.zeros((n, feat.shape[1])), np.zeros(n)
for end in (0, 1):
    np.add.at(sums, edges[:, end], feat)
    np.add.at(counts, edges[:, end], 1)
x = sums / np.maximum(counts, 1)[:, None]
assert counts[n - 1] == 0 and not x[n - 1].any(), "the last node has no edge: zeros"
# symmetrize (no duplicates, no self-loops in the file), then one self-loop per node.
src = np.concatenate([edges[:, 0], edges[:, 1], np.arange(n)])
dst = np.concatenate([edges[:, 1], edges[:, 0], np.arange(n)])
# The NumPy layout holds the same arrays (edge features as float32, read from the text exactly).
npy = f"{data}-npy"
assert (np.load(f"{npy}/edge_index.npy") == edges.T).all()
assert (np.load(f"{npy}/edge_feat.npy") == feat.astype(np.float32)).all()
assert (np.load(f"{npy}/label.npy") == labels).all()
for run in ("metis", "ptscotch", "numpy"):
    logits = gcn_logits(x, src, dst, f"{tmp}/{run}/params.bin", labels.shape[1])
    check_run(f"ogb_edge_features ({run})", f"{tmp}/{run}", 40, logits, labels, split,
              workers=2, min_test=0.7)
PY

rm "$tmp/proteins/raw/edge-feat.csv.gz"
expect_failure no_edge_feat 2 "edge-feat.csv.gz: dataset.features_from_edges: file not found" \
  "${common[@]}" --set "output.dir=$tmp/none"
echo "ogb_edge_features: passed"
