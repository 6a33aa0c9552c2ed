"""Mini-batch GraphSAGE with DGL's neighbour sampler, timed for time-to-accuracy against adaqp.

The model is adaqp's GraphSAGE (model.type: sage): per layer, mean over in-neighbours (self-loops
included, as adaqp's dataset.self_loops adds them) times W_n plus bias, plus the node's own row
times W_r; ReLU and dropout between layers; Adam without weight decay; softmax cross-entropy on the
training nodes. The graph is prepared as adaqp prepares it with dataset.symmetrize and
dataset.self_loops: every reverse edge added, duplicates and self-loops dropped, one self-loop
per node added. Features sparse enough (at most 20% non-zero, adaqp's own rule for
training.sparse_features) stay sparse: layer 0 multiplies the sampled rows as a sparse matrix, as
adaqp does. What differs from adaqp's full-graph model: dropout acts on layer 0's input rows
before aggregating (adaqp drops out the aggregated rows A*X), and every step sees a sampled
neighbourhood.

Time: training seconds count sampling, feature gathering, forward, backward and the optimizer
step; validation (full-neighbourhood inference on the whole graph, dropout off) is excluded and
runs every --eval-every-s training seconds. Start-up is the time from the launch (the epoch
seconds in $TTA_LAUNCH, else this module's first line) to the first step: interpreter, imports,
loading the cached graph, building it. The one-time conversion of a dataset into the cache is
reported apart (preprocess_s) and not counted.

Prints JSON lines: {"event": "eval", ...} at each validation and {"event": "summary", ...} last.
"""
import argparse
import json
import os
import sys
import time

START = float(os.environ.get("TTA_LAUNCH", time.time()))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def read_csv_gz(path, dtype):
    import pandas as pd
    return pd.read_csv(path, header=None, dtype=dtype, compression="gzip").to_numpy()


def load_raw(data, split):
    """The dataset as arrays: OGB raw CSV layout or adaqp's NumPy layout."""
    if os.path.exists(f"{data}/edge_index.npy"):
        edge = np.load(f"{data}/edge_index.npy")
        feat = np.load(f"{data}/feat.npy")
        label = np.load(f"{data}/label.npy").reshape(-1)
        sets = [np.load(f"{data}/{s}.npy") for s in ("train", "valid", "test")]
        return edge[0], edge[1], feat, label, sets
    edge = read_csv_gz(f"{data}/raw/edge.csv.gz", np.int64)
    feat = read_csv_gz(f"{data}/raw/node-feat.csv.gz", np.float32)
    label = read_csv_gz(f"{data}/raw/node-label.csv.gz", np.int64).reshape(-1)
    if not split:
        split = sorted(os.listdir(f"{data}/split"))[0]
    sets = [read_csv_gz(f"{data}/split/{split}/{s}.csv.gz", np.int64).reshape(-1)
            for s in ("train", "valid", "test")]
    return edge[:, 0], edge[:, 1], feat, label, sets


def prepare(data, split, cache):
    """Loads DATA through CACHE (an .npz written on first use); returns arrays and the seconds the
    conversion took (0 when the cache existed)."""
    t0 = time.perf_counter()
    if not os.path.exists(cache):
        src, dst, feat, label, sets = load_raw(data, split)
        n = feat.shape[0]
        # Symmetrize, drop duplicates and self-loops, then one self-loop per node.
        s = np.concatenate([src, dst])
        d = np.concatenate([dst, src])
        keep = s != d
        a = sp.coo_matrix((np.ones(int(keep.sum()), np.int8), (d[keep], s[keep])), shape=(n, n))
        a = a.tocsr()
        a.sum_duplicates()
        a = (a + sp.identity(n, dtype=np.int8, format="csr")).tocoo()
        dense = np.count_nonzero(feat) > 0.2 * feat.size
        out = {"dst": a.row.astype(np.int64), "src": a.col.astype(np.int64),
               "label": label, "train": sets[0], "valid": sets[1], "test": sets[2]}
        if dense:
            out["feat"] = feat.astype(np.float32)
        else:
            x = sp.csr_matrix(feat.astype(np.float32))
            out.update(x_data=x.data, x_indices=x.indices, x_indptr=x.indptr,
                       x_shape=np.array(x.shape))
        tmp = cache + ".tmp.npz"
        np.savez(tmp, **out)
        os.replace(tmp, cache)
        converted = time.perf_counter() - t0
    else:
        converted = 0.0
    z = np.load(cache)
    if "feat" in z:
        feat = z["feat"]
    else:
        feat = sp.csr_matrix((z["x_data"], z["x_indices"], z["x_indptr"]),
                             shape=tuple(z["x_shape"]))
    return (z["src"], z["dst"], feat, z["label"], [z["train"], z["valid"], z["test"]]), converted


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="OGB raw dataset dir or adaqp NumPy layout dir")
    p.add_argument("--split", default="", help="split folder under split/ (OGB layout)")
    p.add_argument("--cache", required=True, help=".npz the prepared graph is kept in")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--prepare-only", action="store_true",
                   help="write the cache, print its conversion time, train nothing")
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--fanouts", default="10,10", help="per layer, input layer first")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-s", type=float, default=10.0, help="training seconds to run")
    p.add_argument("--eval-every-s", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    fanouts = [int(f) for f in a.fanouts.split(",")]
    if len(fanouts) != a.layers:
        sys.exit(f"dgl_sage: --fanouts has {len(fanouts)} entries, --layers is {a.layers}")

    import torch
    import torch.nn.functional as F
    torch.set_num_threads(a.threads)
    import dgl
    import dgl.function as fn

    (src, dst, feat, label, sets), converted = prepare(a.data, a.split, a.cache)
    if a.prepare_only:
        print(json.dumps({"event": "prepared", "cache": a.cache, "preprocess_s": converted}))
        return
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    dgl.seed(a.seed)
    n = feat.shape[0]
    g = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=n)
    g_eval = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=n)
    sparse = sp.issparse(feat)
    x_dense = None if sparse else torch.from_numpy(feat)
    y = torch.from_numpy(label.astype(np.int64))
    train, valid, test = (torch.from_numpy(s.astype(np.int64)) for s in sets)
    classes = int(label.max()) + 1
    dims = [feat.shape[1]] + [a.hidden] * (a.layers - 1) + [classes]

    def rows(ids, training):
        """Feature rows IDS: a dense tensor, or a sparse COO tensor with dropout on its values."""
        if not sparse:
            return F.dropout(x_dense[ids], a.dropout, training)
        m = feat[ids.numpy()].tocoo()
        idx = torch.from_numpy(np.vstack([m.row, m.col]).astype(np.int64))
        vals = F.dropout(torch.from_numpy(m.data), a.dropout, training)
        return torch.sparse_coo_tensor(idx, vals, m.shape)

    class Sage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.neigh = torch.nn.ModuleList(
                torch.nn.Linear(dims[i], dims[i + 1]) for i in range(a.layers))
            self.root = torch.nn.ModuleList(
                torch.nn.Linear(dims[i], dims[i + 1], bias=False) for i in range(a.layers))

        def layer(self, i, block, h):
            w = torch.cat([self.neigh[i].weight, self.root[i].weight]).t().contiguous()
            d = dims[i + 1]
            # Multiply first where it narrows the rows (the mean is linear, so the order is exact).
            if h.is_sparse or dims[i] > d:
                z = torch.sparse.mm(h, w) if h.is_sparse else h @ w
                block.srcdata["z"] = z[:, :d]
                block.update_all(fn.copy_u("z", "m"), fn.mean("m", "a"))
                out = block.dstdata["a"] + z[: block.num_dst_nodes(), d:]
            else:
                block.srcdata["z"] = h
                block.update_all(fn.copy_u("z", "m"), fn.mean("m", "a"))
                out = block.dstdata["a"] @ w[:, :d] + h[: block.num_dst_nodes()] @ w[:, d:]
            return out + self.neigh[i].bias

        def forward(self, blocks, h):
            for i, block in enumerate(blocks):
                if i > 0:
                    h = F.dropout(F.relu(h), a.dropout, self.training)
                h = self.layer(i, block, h)
            return h

    model = Sage()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    sampler = dgl.dataloading.NeighborSampler(fanouts)
    loader = dgl.dataloading.DataLoader(g, train, sampler, batch_size=a.batch, shuffle=True,
                                        drop_last=False, num_workers=0)

    def evaluate():
        model.eval()
        with torch.no_grad():
            logits = model([g_eval] * a.layers, rows(torch.arange(n), False))
        model.train()
        pred = logits.argmax(1)
        return [float((pred[s] == y[s]).float().mean()) for s in (valid, test)]

    startup = time.time() - START - converted
    train_s, next_eval, steps, epoch = 0.0, a.eval_every_s, 0, 0
    best_val, test_at_best = -1.0, 0.0
    done = False
    while not done:
        epoch += 1
        t = time.perf_counter()
        for input_nodes, output_nodes, blocks in loader:
            logits = model(blocks, rows(input_nodes, True))
            loss = F.cross_entropy(logits, y[output_nodes])
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            now = time.perf_counter()
            train_s += now - t
            if train_s >= next_eval or train_s >= a.budget_s:
                val, tst = evaluate()
                if val > best_val:
                    best_val, test_at_best = val, tst
                print(json.dumps({"event": "eval", "train_s": train_s, "val_acc": val,
                                  "test_acc": tst, "epoch": epoch, "steps": steps,
                                  "loss": float(loss)}), flush=True)
                next_eval = train_s + a.eval_every_s
                if train_s >= a.budget_s:
                    done = True
                    break
            t = time.perf_counter()
    print(json.dumps({"event": "summary", "startup_s": startup, "preprocess_s": converted,
                      "best_val_acc": best_val, "test_acc_at_best_val": test_at_best,
                      "train_s": train_s, "steps": steps, "epochs": epoch,
                      "sparse_features": sparse, "nodes": n, "edges": int(g.num_edges()),
                      "dgl": dgl.__version__, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
