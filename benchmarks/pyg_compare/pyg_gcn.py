"""Full-graph GCN training with PyTorch Geometric on a graph in adaqp's NumPy layout.

The model mirrors `adaqp train` with model.type=gcn: L GCNConv layers (symmetric normalisation
with self-loops, computed once: cached=True), ReLU between layers, dropout before every layer's
weight, Adam with weight decay on all parameters, softmax cross-entropy over the training nodes.
Prints one JSON line: median epoch time over the measured epochs, the peak resident memory and,
on a GPU, the allocator's peak device memory. On a GPU every epoch ends with a synchronisation, so
its time is the device's.
"""
import argparse
import json
import resource
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv


class Gcn(torch.nn.Module):
    def __init__(self, in_dim, hidden, out_dim, layers, dropout):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [out_dim]
        self.convs = torch.nn.ModuleList(
            GCNConv(dims[i], dims[i + 1], cached=True) for i in range(layers))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, self.dropout, self.training)
            x = conv(x, edge_index)
            if i + 1 < len(self.convs):
                x = F.relu(x)
        return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="directory with edge_index.npy, feat.npy, ...")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--epochs", type=int, default=10, help="measured epochs after the warm-up")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--adj", choices=["edge_index", "csr"], default="edge_index",
                   help="edge_index: PyG's scatter path; csr: a torch.sparse CSR adjacency")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = p.parse_args()
    dev = torch.device(a.device)

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x = torch.from_numpy(np.load(f"{a.data}/feat.npy"))
    y = torch.from_numpy(np.load(f"{a.data}/label.npy"))
    train = torch.from_numpy(np.load(f"{a.data}/train.npy"))
    edge_index = torch.from_numpy(np.load(f"{a.data}/edge_index.npy"))
    n = x.size(0)
    if a.adj == "csr":
        # adj_t[dst, src] = 1; GCNConv adds the self-loops and normalises it (cached).
        adj = torch.sparse_coo_tensor(edge_index.flip(0), torch.ones(edge_index.size(1)), (n, n))
        graph = adj.coalesce().to_sparse_csr()
    else:
        graph = edge_index
    x, y, train, graph = x.to(dev), y.to(dev), train.to(dev), graph.to(dev)
    model = Gcn(x.size(1), a.hidden, int(y.max()) + 1, a.layers, a.dropout).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    model.train()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    times = []
    for epoch in range(a.warmup + a.epochs):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(model(x, graph)[train], y[train])
        loss.backward()
        opt.step()
        sync()
        times.append(time.perf_counter() - t0)
    measured = times[a.warmup:]
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    row = {
        "system": f"pyg-{a.adj}", "device": a.device, "workers": 1, "threads": a.threads,
        "nodes": n, "edges": int(edge_index.size(1)), "epochs_measured": len(measured),
        "median_epoch_s": statistics.median(measured), "min_epoch_s": min(measured),
        "peak_rss_mib": peak_kib / 1024, "final_loss": loss.item()}
    if dev.type == "cuda":
        row["peak_allocated_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
        row["peak_reserved_gpu_mib"] = torch.cuda.max_memory_reserved() / 2**20
    print(json.dumps(row))


if __name__ == "__main__":
    main()
