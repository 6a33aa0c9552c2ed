"""Writes a generated graph of ogbn-papers100M's shape in OGB's raw layouts, for the loader's
memory benchmark (run.sh): directed edges of a power-law out-degree (about DEGREE per node),
float32 features [N, FEAT], CLASSES classes on a LABELLED fraction of the nodes and NaN labels
elsewhere (papers100M labels 1.5M of its 111M papers), split "time" 78/8/14% of the labelled nodes.

  make_papers_like.py OUT [--nodes N] [--degree D] [--feat F] [--classes C] [--labelled P]

OUT/bin         the binary layout as ogb.io.DatasetSaver writes it (numpy.savez_compressed)
OUT/bin-stored  the same with members stored (numpy.savez)
OUT/csv         the CSV layout of the same data (unlabelled nodes as class 0, the class the binary
                loader gives them, so that both load as the same graph; gzip level 1)
"""
import argparse
import gzip
import os

import numpy as np


def write_csv(path, array, fmt):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wb", compresslevel=1) as f:
        np.savetxt(f, array, fmt=fmt, delimiter=",")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--nodes", type=int, default=1_000_000)
    p.add_argument("--degree", type=float, default=14.5)  # 1.6B edges / 111M nodes
    p.add_argument("--feat", type=int, default=128)
    p.add_argument("--classes", type=int, default=172)
    p.add_argument("--labelled", type=float, default=0.0139)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    n = a.nodes
    weight = rng.zipf(2.2, n).astype(np.float64)
    out_degree = np.minimum(weight * a.degree / weight.mean(), n - 1).astype(np.int64)
    short = int(round(n * a.degree)) - int(out_degree.sum())  # what flooring dropped
    np.add.at(out_degree, rng.integers(0, n, max(short, 0)), 1)
    src = np.repeat(np.arange(n, dtype=np.int64), out_degree)
    dst = rng.integers(0, n, src.size, dtype=np.int64)
    edge_index = np.stack([src, dst])
    del src, dst
    feat = rng.standard_normal((n, a.feat), dtype=np.float32)
    labelled = rng.permutation(n)[: int(n * a.labelled)]
    label = np.full((n, 1), np.nan)
    label[labelled, 0] = rng.integers(0, a.classes, labelled.size)
    k = labelled.size
    split = {"train": np.sort(labelled[: int(0.78 * k)]),
             "valid": np.sort(labelled[int(0.78 * k): int(0.86 * k)]),
             "test": np.sort(labelled[int(0.86 * k):])}
    counts = {"num_nodes_list": np.array([n]), "num_edges_list": np.array([edge_index.shape[1]])}
    for name, save in (("bin", np.savez_compressed), ("bin-stored", np.savez)):
        raw = os.path.join(a.out, name, "raw")
        os.makedirs(raw)
        save(os.path.join(raw, "data.npz"), edge_index=edge_index, node_feat=feat, **counts)
        save(os.path.join(raw, "node-label.npz"), node_label=label)
    raw = os.path.join(a.out, "csv", "raw")
    write_csv(os.path.join(raw, "edge.csv.gz"), edge_index.T, "%d")
    write_csv(os.path.join(raw, "node-feat.csv.gz"), feat, "%.9g")  # round-trips float32
    write_csv(os.path.join(raw, "node-label.csv.gz"), np.nan_to_num(label, nan=0), "%d")
    write_csv(os.path.join(raw, "num-node-list.csv.gz"), [[n]], "%d")
    write_csv(os.path.join(raw, "num-edge-list.csv.gz"), [[edge_index.shape[1]]], "%d")
    for layout in ("bin", "bin-stored", "csv"):
        for key, ids in split.items():
            write_csv(os.path.join(a.out, layout, "split", "time", key + ".csv.gz"), ids[:, None], "%d")
    print(f"{n} nodes, {edge_index.shape[1]} edges, {a.feat} features, {k} labelled nodes")


if __name__ == "__main__":
    main()
