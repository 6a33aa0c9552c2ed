#!/usr/bin/env bash
# What ogbn-proteins' two options cost: node features made from edge features
# (dataset.features_from_edges) against the same features read from node-feat, and the ROC-AUC
# score (training.metric: rocauc) against F1-micro. A generated dataset of ogbn-proteins' shape in
# OGB's CSV layout (NODES nodes, 112 tasks, 8 edge features in [0, 1], a species-like split of
# 65/16/19%; each undirected edge once, DEGREE of them per node on average: the real graph has
# about 300, which this machine cannot train in minutes), and a copy of it whose node-feat.csv.gz
# holds the features the edges give (the means, computed here in NumPy).
#   load: `adaqp partition` (W=2, METIS) of each copy, ROUNDS alternated rounds; the summary's
#     load phase is not written by partition, so the whole command's wall time is compared.
#   metric: a 2-worker GCN job (Vanilla, one thread a rank, EPOCHS epochs, evaluation every epoch)
#     with rocauc and with f1_micro, ROUNDS alternated rounds, on one partition; the training
#     phase's seconds (seconds_by_phase) per epoch compared.
#
# Usage: benchmarks/proteins/run.sh [WORK_DIR]   (default runs/proteins)
# Environment: ADAQP_BIN (build/src/adaqp), NODES (132534), DEGREE (25), EPOCHS (10), ROUNDS (3).
# Writes provenance.json, the datasets, every run's folder and log, summary.json and summary.md
# (also printed).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
work=${1:-$ADAQP_ROOT/runs/proteins}
nodes=${NODES:-132534}
degree=${DEGREE:-25}
epochs=${EPOCHS:-10}
rounds=${ROUNDS:-3}
((rounds >= 1)) || die "ROUNDS must be at least 1, got $rounds"
require_adaqp
python=${ADAQP_PYTHON:-$ADAQP_ROOT/.venv/bin/python}
"$python" -c 'import numpy' 2>/dev/null || die "$python has no NumPy (scripts/setup.sh makes .venv)"
mkdir -p "$work"
python3 "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"
export OMP_NUM_THREADS=1

if [[ ! -d $work/edges ]]; then
  log "writing a proteins-shaped dataset of $nodes nodes, degree $degree"
  "$python" - "$work" "$nodes" "$degree" <<'PY'
import gzip, os, shutil, sys
import numpy as np

work, n, degree = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
tasks, dim = 112, 8
z = rng.normal(size=(n, dim))
# Homophilous: edges join nodes of nearby positions on a ring of the first latent coordinate.
order = np.argsort(z[:, 0])
m = n * degree // 2
a = rng.integers(0, n, size=m)
b = (a + rng.integers(1, 200, size=m)) % n
edges = np.stack([order[a], order[b]], axis=1)
edges = np.unique(np.sort(edges, axis=1), axis=0)
feat = np.clip(0.5 + 0.2 * (z[edges[:, 0]] + z[edges[:, 1]])
               + rng.normal(scale=0.1, size=(len(edges), dim)), 0, 1)
labels = (z @ rng.normal(size=(dim, tasks)) > 1.0).astype(np.int8)
perm = rng.permutation(n)
cut = [int(0.65 * n), int(0.81 * n)]

def write(root, name, text):
    path = f"{root}/{name}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write(text)

def lines(rows, fmt):
    return "".join(fmt % tuple(r) + "\n" for r in rows)

root = f"{work}/edges"
write(root, "raw/edge.csv.gz", lines(edges, "%d,%d"))
write(root, "raw/edge-feat.csv.gz", lines(feat, ",".join(["%.4f"] * dim)))
write(root, "raw/node-label.csv.gz", lines(labels, ",".join(["%d"] * tasks)))
write(root, "raw/num-node-list.csv.gz", f"{n}\n")
write(root, "raw/num-edge-list.csv.gz", f"{len(edges)}\n")
for name, idx in (("train", perm[:cut[0]]), ("valid", perm[cut[0]:cut[1]]),
                  ("test", perm[cut[1]:])):
    write(root, f"split/species/{name}.csv.gz", "".join(f"{v}\n" for v in np.sort(idx)))
# The copy: node-feat.csv.gz holds each node's mean over its edges (as the file rounds them).
shutil.copytree(root, f"{work}/nodes")
os.remove(f"{work}/nodes/raw/edge-feat.csv.gz")
rounded = np.round(feat, 4)
sums, counts = np.zeros((n, dim)), np.zeros(n)
for end in (0, 1):
    np.add.at(sums, edges[:, end], rounded)
    np.add.at(counts, edges[:, end], 1)
write(f"{work}/nodes", "raw/node-feat.csv.gz",
      lines(sums / np.maximum(counts, 1)[:, None], ",".join(["%.9g"] * dim)))
print(f"{n} nodes, {len(edges)} undirected edges, {tasks} tasks")
PY
fi

# job NAME COPY ARGS...: adaqp ARGS on 2 ranks with the copy's dataset; its start and end (seconds
# since the epoch) to NAME.time.
job() {
  local name=$1 copy=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" "$@" \
    --set "dataset.path=$work/$copy" --set dataset.symmetrize=true --set partition.parts=2 \
    --set training.threads=1 --set training.device=cpu --set output.log_level=warn \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; die "$name failed"; }
  end=$(date +%s.%N)
  echo "$start $end" >"$work/$name.time"
}

for ((r = 1; r <= rounds; ++r)); do
  for copy in edges nodes; do
    from=none
    [[ $copy == nodes ]] || from=mean
    rm -rf "$work/partition-$copy-$r"
    log "round $r: partition ($copy)"
    job "partition-$copy-$r" "$copy" partition --set "dataset.features_from_edges=$from" \
      --out "$work/partition-$copy-$r"
  done
done
for ((r = 1; r <= rounds; ++r)); do
  for metric in rocauc f1_micro; do
    log "round $r: train ($metric)"
    rm -rf "$work/train-$metric-$r"
    job "train-$metric-$r" edges train --set dataset.features_from_edges=mean \
      --set "partition.dir=$work/partition-edges-1" --set "training.metric=$metric" \
      --set model.layers=2 --set model.hidden=64 --set communication.mode=vanilla \
      --set "training.epochs=$epochs" --set "output.dir=$work/train-$metric-$r"
  done
done

"$python" - "$work" "$rounds" "$epochs" <<'PY'
import json, statistics, sys

work, rounds, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def seconds(name):
    start, end = map(float, open(f"{work}/{name}.time").read().split())
    return end - start

def training(name):
    rows = [json.loads(l) for l in open(f"{work}/{name}/metrics.jsonl")]
    s = [r for r in rows if r.get("event") == "summary"][-1]
    return max(p[3] for p in s["seconds_by_phase"]) / epochs, s

def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"

load = {c: [seconds(f"partition-{c}-{r}") for r in range(1, rounds + 1)] for c in ("edges", "nodes")}
train = {m: [training(f"train-{m}-{r}") for r in range(1, rounds + 1)] for m in ("rocauc", "f1_micro")}
per_epoch = {m: [t for t, _ in v] for m, v in train.items()}
scores = {m: [s["final_test_acc"] for _, s in v] for m, v in train.items()}
summary = {"partition_s": load, "training_s_per_epoch": per_epoch, "final_test_score": scores}
json.dump(summary, open(f"{work}/summary.json", "w"), indent=1)
lines = [f"| measure | {rounds} alternated rounds: median (min-max) |", "|---|---|",
         f"| `adaqp partition`, features from edge-feat (s) | {spread(load['edges'])} |",
         f"| `adaqp partition`, features from node-feat (s) | {spread(load['nodes'])} |",
         f"| training phase per epoch, evaluated by ROC-AUC (s) | {spread(per_epoch['rocauc'])} |",
         f"| training phase per epoch, evaluated by F1-micro (s) | {spread(per_epoch['f1_micro'])} |",
         f"| final test ROC-AUC / F1-micro | {spread(scores['rocauc'])} / {spread(scores['f1_micro'])} |"]
text = "\n".join(lines) + "\n"
open(f"{work}/summary.md", "w").write(text)
print(text)
PY
