"""Full-graph R-GCN training with PyTorch Geometric's RGCNConv, the counterpart of adaqp's
model.type rgcn at W=1, on a graph in OGB's heterogeneous raw layout (as `adaqp generate` writes
the ogbn-mag-shaped graph).

The graph is read as adaqp reads it: node types in num-node-dict's order, each a contiguous id
range; every relation's edges; with --add-reverse every relation (s, r, d) between two types gains
(d, rev_r, s) and a relation within one type gains its reverse edges, duplicates dropped (adaqp's
dataset.add_reverse, PyG's ToUndirected). Types without features read zero rows, as in adaqp.

The model: LAYERS RGCNConv layers (aggr="mean", root weight and bias, num_bases when given),
ReLU and dropout between them, dropout on the input; Adam with weight decay; softmax cross-entropy
over the labelled type's training nodes. RGCNConv runs PyG's stock path for an edge_index (one
gather and scatter-mean per relation; without pyg_lib and torch_sparse, as installed here). What
still differs from adaqp: adaqp aggregates with its own CSR kernels (one sparse product per block
of pairs, then one dense product per relation), PyG gathers every edge's source row; dropout masks
are drawn differently (adaqp keys them by node id).

Prints one JSON line: the median epoch time over the measured epochs, the set-up time, the peak
resident memory and, on a GPU, the allocator's peak device memory.
"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import RGCNConv

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pyg_compare"))
import pyg_timing  # noqa: E402


def read_lines(path):
    with gzip.open(path, "rb") as f:
        return f.read().split(b"\n")


def read_ints(path, columns):
    data = gzip.open(path, "rb").read().replace(b"\n", b",").rstrip(b",")
    return np.array(data.split(b","), dtype=np.int64).reshape(-1, columns)


def read_floats(path):
    lines = [l for l in read_lines(path) if l]
    return np.array(b",".join(lines).split(b","), dtype=np.float32).reshape(len(lines), -1)


def load(root, add_reverse):
    raw = os.path.join(root, "raw")
    header, counts = read_lines(os.path.join(raw, "num-node-dict.csv.gz"))[:2]
    types = header.decode().split(",")
    sizes = [int(c) for c in counts.split(b",")]
    offset = dict(zip(types, np.cumsum([0] + sizes)[:-1].tolist()))
    n = sum(sizes)
    triplets = [l.decode().split(",") for l in read_lines(os.path.join(raw, "triplet-type-list.csv.gz")) if l]
    relations = []  # (source type, name, target type, src ids, dst ids), global ids
    for s, r, d in triplets:
        e = read_ints(os.path.join(raw, "relations", f"{s}___{r}___{d}", "edge.csv.gz"), 2)
        relations.append((s, r, d, e[:, 0] + offset[s], e[:, 1] + offset[d]))
    if add_reverse:
        out = []
        for s, r, d, src, dst in relations:
            if s == d:
                pairs = np.unique(np.concatenate([np.stack([src, dst], 1), np.stack([dst, src], 1)]), axis=0)
                out.append((s, r, d, pairs[:, 0], pairs[:, 1]))
            else:
                out.append((s, r, d, src, dst))
                out.append((d, "rev_" + r, s, dst, src))
        relations = out
    edge_index = torch.from_numpy(np.stack([np.concatenate([r[3] for r in relations]),
                                            np.concatenate([r[4] for r in relations])]))
    edge_type = torch.cat([torch.full((len(r[3]),), i, dtype=torch.long)
                           for i, r in enumerate(relations)])
    x = None
    labelled = None
    for t in types:
        feat = os.path.join(raw, "node-feat", t, "node-feat.csv.gz")
        if os.path.exists(feat):
            f = torch.from_numpy(read_floats(feat))
            if x is None:
                x = torch.zeros(n, f.size(1))
            x[offset[t]:offset[t] + f.size(0)] = f
        if os.path.exists(os.path.join(raw, "node-label", t, "node-label.csv.gz")):
            labelled = t
    y = torch.from_numpy(read_ints(os.path.join(raw, "node-label", labelled, "node-label.csv.gz"), 1)[:, 0])
    split = [d for d in os.listdir(os.path.join(root, "split"))][0]
    train = torch.from_numpy(read_ints(os.path.join(root, "split", split, labelled, "train.csv.gz"), 1)[:, 0])
    first = offset[labelled]
    return x, edge_index, edge_type, len(relations), first + train, y[train]


class Net(torch.nn.Module):
    def __init__(self, dims, relations, bases, dropout):
        super().__init__()
        self.dropout = dropout
        self.convs = torch.nn.ModuleList(
            RGCNConv(dims[i], dims[i + 1], relations, num_bases=bases or None, aggr="mean")
            for i in range(len(dims) - 1))

    def forward(self, x, edge_index, edge_type):
        h = F.dropout(x, self.dropout, self.training)
        for i, conv in enumerate(self.convs):
            if i > 0:
                h = F.dropout(F.relu(h), self.dropout, self.training)
            h = conv(h, edge_index, edge_type)
        return h


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="a directory in OGB's heterogeneous raw layout")
    p.add_argument("--add-reverse", type=int, default=1)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--bases", type=int, default=0)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--epochs", type=int, default=10, help="measured epochs after the warm-up")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = p.parse_args()
    dev = torch.device(a.device)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    x, edge_index, edge_type, relations, train, y = load(a.data, a.add_reverse)
    x, edge_index, edge_type = x.to(dev), edge_index.to(dev), edge_type.to(dev)
    train, y = train.to(dev), y.to(dev)
    dims = [x.size(1)] + [a.hidden] * (a.layers - 1) + [int(y.max()) + 1]
    model = Net(dims, relations, a.bases, a.dropout).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    model.train()

    pyg_timing.sync(dev)
    setup_s = time.perf_counter() - t0
    times, final_loss = pyg_timing.train_epochs(
        opt, lambda: F.cross_entropy(model(x, edge_index, edge_type)[train], y), a.warmup,
        a.epochs, dev)
    row = {
        "system": "pyg", "model": "rgcn", "device": a.device, "workers": 1, "threads": a.threads,
        "nodes": x.size(0), "edges": int(edge_index.size(1)), "relations": relations,
        "bases": a.bases, **pyg_timing.timing_fields(times, a.warmup, setup_s, final_loss, dev)}
    print(json.dumps(row))


if __name__ == "__main__":
    main()
