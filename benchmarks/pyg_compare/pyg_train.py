"""Full-graph GCN or GraphSAGE training with PyTorch Geometric on a graph in adaqp's NumPy layout.

Layer 0 comes in two forms (--layer0), each the counterpart of one adaqp setting:

conv    PyG's stock layers on dropout(X): GCNConv (symmetric normalisation with self-loops,
        cached=True) or SAGEConv (mean aggregation, root weight). Every layer's sparse product runs
        every epoch. Counterpart: adaqp with communication.feature_cache=false, which also
        aggregates X every epoch; what still differs: adaqp drops out rows of A·X after
        aggregating (GraphSAGE: and X of the root term, with its own mask), PyG drops out X before,
        and GCNConv multiplies by W before aggregating (256 columns instead of 100).
cached  adaqp's default model: A·X (GCN: PyG's gcn_norm with self-loops; GraphSAGE: the in-degree
        mean over the same edges as adaqp's, self-loops included) computed once before the first epoch, untimed as adaqp's start-up is; layer 0 is
        dropout(A·X)·W + b (GraphSAGE: + dropout(X)·W_r, an independent mask). Counterpart: adaqp
        with the feature cache on (its default).

Layers after the first: ReLU, dropout, the conv. Adam with weight decay on all parameters, softmax
cross-entropy over the training nodes. Prints one JSON line: the median epoch time over the
measured epochs, the set-up time (loading, adjacency, A·X), the peak resident memory and, on a GPU,
the allocator's peak device memory. On a GPU every epoch ends with a synchronisation, so its time
is the device's.
"""
import argparse
import json
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv, Linear, SAGEConv
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import add_remaining_self_loops, spmm

import pyg_timing


def make_conv(model, d_in, d_out):
    if model == "gcn":
        return GCNConv(d_in, d_out, cached=True)
    return SAGEConv(d_in, d_out, aggr="mean")


class Net(torch.nn.Module):
    def __init__(self, model, layer0, dims, dropout):
        super().__init__()
        self.dropout = dropout
        self.cached = layer0 == "cached"
        first = 1 if self.cached else 0
        if self.cached:
            # The same weights as the conv layer 0 would hold: GCNConv's lin is Glorot with a
            # separate zero bias; SAGEConv's lin_l carries the bias, lin_r none.
            init = "glorot" if model == "gcn" else "kaiming_uniform"
            self.lin0 = Linear(dims[0], dims[1], weight_initializer=init,
                               bias_initializer="zeros" if model == "gcn" else None)
            self.root0 = Linear(dims[0], dims[1], bias=False) if model == "sage" else None
        self.convs = torch.nn.ModuleList(
            make_conv(model, dims[i], dims[i + 1]) for i in range(first, len(dims) - 1))

    def forward(self, x, ax, adj):
        h = x
        if self.cached:
            h = self.lin0(F.dropout(ax, self.dropout, self.training))
            if self.root0 is not None:
                h = h + self.root0(F.dropout(x, self.dropout, self.training))
        for i, conv in enumerate(self.convs):
            if self.cached or i > 0:
                h = F.dropout(F.relu(h), self.dropout, self.training)
            else:
                h = F.dropout(h, self.dropout, self.training)
            h = conv(h, adj)
        return h


def aggregated_features(model, adj_t, x):
    """A·X with the aggregation layer 0's conv would apply, from the CSR adjacency adj_t[dst, src]."""
    if model == "gcn":
        return torch.sparse.mm(gcn_norm(adj_t, None, x.size(0), add_self_loops=True)[0], x)
    return spmm(adj_t, x, reduce="mean")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="directory with edge_index.npy, feat.npy, ...")
    p.add_argument("--model", choices=["gcn", "sage"], default="gcn")
    p.add_argument("--layer0", choices=["conv", "cached"], default="conv")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--epochs", type=int, default=10, help="measured epochs after the warm-up")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--adj", choices=["edge_index", "csr"], default="csr",
                   help="csr: a torch.sparse CSR adjacency; edge_index: PyG's scatter path")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = p.parse_args()
    dev = torch.device(a.device)

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    x = torch.from_numpy(np.load(f"{a.data}/feat.npy")).to(dev)
    y = torch.from_numpy(np.load(f"{a.data}/label.npy")).to(dev)
    train = torch.from_numpy(np.load(f"{a.data}/train.npy")).to(dev)
    edge_index = torch.from_numpy(np.load(f"{a.data}/edge_index.npy")).to(dev)
    n = x.size(0)
    if a.model == "sage":
        # adaqp's job adds a self-loop to every node (dataset.self_loops=true), so GraphSAGE's mean
        # runs over the same edges; GCNConv adds its own.
        edge_index = add_remaining_self_loops(edge_index, num_nodes=n)[0]
    num_edges = int(edge_index.size(1))
    adj_t = None
    if a.adj == "csr" or a.layer0 == "cached":
        # adj_t[dst, src] = 1; the convs add self-loops and normalise it themselves (cached).
        ones = torch.ones(num_edges, device=dev)
        adj_t = torch.sparse_coo_tensor(edge_index.flip(0), ones, (n, n)).coalesce().to_sparse_csr()
    ax = aggregated_features(a.model, adj_t, x) if a.layer0 == "cached" else None
    graph = adj_t if a.adj == "csr" else edge_index
    if a.adj == "csr":
        del edge_index
    dims = [x.size(1)] + [a.hidden] * (a.layers - 1) + [int(y.max()) + 1]
    model = Net(a.model, a.layer0, dims, a.dropout).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    model.train()

    pyg_timing.sync(dev)
    setup_s = time.perf_counter() - t0
    times, final_loss = pyg_timing.train_epochs(
        opt, lambda: F.cross_entropy(model(x, ax, graph)[train], y[train]), a.warmup, a.epochs, dev)
    row = {
        "system": "pyg", "model": a.model, "layer0": a.layer0, "adj": a.adj, "device": a.device,
        "workers": 1, "threads": a.threads, "nodes": n, "edges": num_edges,
        **pyg_timing.timing_fields(times, a.warmup, setup_s, final_loss, dev)}
    print(json.dumps(row))


if __name__ == "__main__":
    main()
