"""A float64 NumPy reference for the CLI tests of training.metric=rocauc: the forward pass of a
2-layer GCN (hidden 16) over the final parameters of a run (params.bin), each split's mean over
tasks of the pairwise ROC-AUC (a positive above a negative 1, a tie 1/2; tasks without both classes
left out), and the check of a run's reported scores against it."""
import json
import os

import numpy as np


def gcn_logits(x, src, dst, params_path, tasks, hidden=16):
    """x: float64 [N, F]; src, dst: every edge of the graph the run trained on, self-loops
    included (symmetric: in-degree = out-degree); GCN's a_ij = 1 / sqrt(deg(i) deg(j))."""
    n, f = x.shape
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    weight = 1.0 / np.sqrt(deg[dst] * deg[src])

    def aggregate(h):
        y = np.zeros_like(h)
        np.add.at(y, dst, weight[:, None] * h[src])
        return y

    # params.bin: float32, registration order: layer0 W (hidden x F), b, layer1 W (C x hidden), b;
    # params.json beside it must say so, and its offsets slice the file.
    p = np.fromfile(params_path, dtype="<f4").astype(np.float64)
    with open(os.path.join(os.path.dirname(params_path), "params.json")) as file:
        layout = json.load(file)
    expected = [("layer0_neighbour.weight", [hidden, f]), ("layer0_neighbour.bias", [hidden]),
                ("layer1_neighbour.weight", [tasks, hidden]), ("layer1_neighbour.bias", [tasks])]
    assert [(q["name"], q["shape"]) for q in layout["parameters"]] == expected, layout
    assert layout["values"] == p.size, f"params.bin holds {p.size} values, params.json {layout['values']}"
    w0, b0, w1, b1 = [p[q["offset"]:q["offset"] + int(np.prod(q["shape"]))].reshape(q["shape"])
                      for q in layout["parameters"]]
    return aggregate(np.maximum(aggregate(x) @ w0.T + b0, 0.0) @ w1.T) + b1


def mean_auc(logits, labels, idx):
    """(the mean over the tasks holding both classes in idx, how many such tasks)."""
    aucs = []
    for t in range(labels.shape[1]):
        s, y = logits[idx, t], labels[idx, t]
        pos, neg = s[y == 1], s[y == 0]
        if pos.size == 0 or neg.size == 0:
            continue
        diff = pos[:, None] - neg[None, :]
        aucs.append(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)
    return float(np.mean(aucs)), len(aucs)


def check_run(name, run, epoch, logits, labels, split, workers, min_test):
    """The run's evaluated records of `epoch` (one per worker) and its summary against the
    reference within 1e-3 (pairs whose float32 and float64 logits order differently); returns the
    reference {split: (mean, defined tasks)}."""
    ref = {s: mean_auc(logits, labels, idx) for s, idx in split.items()}
    records = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
    last = [r for r in records if r.get("epoch") == epoch and "event" not in r and "test_acc" in r]
    assert len(last) == workers, f"{len(last)} evaluated records of epoch {epoch}, not {workers}"
    summary = [r for r in records if r.get("event") == "summary"][0]
    assert summary["metric"] == "rocauc", summary["metric"]
    for r in last:
        for key, s in (("train_acc", "train"), ("val_acc", "valid"), ("test_acc", "test")):
            assert abs(r[key] - ref[s][0]) <= 1e-3, \
                f"rank {r['rank']} {key} {r[key]:.6f}, NumPy reference {ref[s][0]:.6f}"
    assert abs(summary["final_test_acc"] - ref["test"][0]) <= 1e-3, summary
    # Chance is 0.5: a model that learned nothing, or scores read from the wrong rows, is far off.
    assert ref["test"][0] > min_test, ref
    print(f"{name}: train/val/test ROC-AUC {ref['train'][0]:.4f}/{ref['valid'][0]:.4f}/"
          f"{ref['test'][0]:.4f} recomputed in NumPy ({ref['valid'][1]} of {labels.shape[1]} "
          f"tasks defined in validation) match the reported {last[0]['train_acc']:.4f}/"
          f"{last[0]['val_acc']:.4f}/{last[0]['test_acc']:.4f}")
    return ref
