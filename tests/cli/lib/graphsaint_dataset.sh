# shellcheck shell=bash
# make_graphsaint_dataset DIR single|multi (with $PYTHON, which has NumPy): a homophilous symmetric
# graph of 240 nodes, 16 features and 4 classes in DIR, in the GraphSAINT layout exactly as its
# files are made, and its sizes in DIR/../<name of DIR>.expected.json.
make_graphsaint_dataset() {
  "$PYTHON" - "$1" "$2" <<'PY'
import json, os, sys
import numpy as np
out, multi = sys.argv[1], sys.argv[2] == "multi"
os.makedirs(out)
rng = np.random.default_rng(7)
n, f, c = 240, 16, 4
y = rng.integers(0, c, n)
edges = set()
for v in range(n):
    for u in list(rng.choice(np.flatnonzero(y == y[v]), 4)) + [rng.integers(n)]:
        if u != v:
            edges.add((v, int(u)))
            edges.add((int(u), v))
rows = np.array(sorted(edges), dtype=np.int64)
indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[:, 0], minlength=n))])
np.savez_compressed(os.path.join(out, "adj_full.npz"), indices=rows[:, 1].astype(np.int32),
                    indptr=indptr.astype(np.int32), format=np.array(b"csr"),
                    shape=np.array([n, n]), data=np.ones(len(rows), dtype=np.float32))
means = rng.normal(0, 2, (c, f))
np.save(os.path.join(out, "feats.npy"), means[y] + rng.normal(0, 1, (n, f)))  # float64
if multi:
    labels = {str(v): [int(k == y[v] or (k == (y[v] + 1) % c and v % 3 == 0)) for k in range(c)]
              for v in range(n)}
else:
    labels = {str(v): int(y[v]) for v in range(n)}
json.dump(labels, open(os.path.join(out, "class_map.json"), "w"))
perm = [int(v) for v in rng.permutation(n)]
json.dump({"tr": perm[:144], "va": perm[144:192], "te": perm[192:]},
          open(os.path.join(out, "role.json"), "w"))
json.dump({"nodes": n, "edges": len(rows), "feat_dim": f, "num_classes": c},
          open(os.path.join(out, "..", os.path.basename(out) + ".expected.json"), "w"))
PY
}

