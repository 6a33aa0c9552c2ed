#!/usr/bin/env bash
# Full-graph GCN training: `adaqp train` on W=1 and W=2 workers against PyTorch Geometric
# (pyg_gcn.py: a GCNConv stack), on one generated graph (default 200k nodes, 4M directed edges,
# 128 features, 16 classes), 3 layers, hidden 256, dropout 0.5, Adam lr 0.01, weight decay 5e-4.
# Each system runs WARMUP + EPOCHS training epochs; the epoch time is the median of the last
# EPOCHS (adaqp: per epoch the slowest rank's forward + backward + all-reduce + Adam step, from
# metrics.jsonl; PyG: the same steps timed in Python). Peak memory is the peak resident set size
# of each process (GNU time for adaqp's ranks, getrusage in pyg_gcn.py), graph loading included.
# Threads: THREADS (default 2) for adaqp W=1 and for PyG; 1 per worker for W=2.
# PyG runs twice: with edge_index (its default scatter path) and with a torch.sparse CSR adjacency.
# Prints one JSON line per measurement and a table; installs torch_geometric into the Python
# environment when it is missing (pure Python, no compiled extensions).
#
# Usage: benchmarks/pyg_compare/run.sh [WORK_DIR]   (default runs/pyg_compare)
# Environment: ADAQP_BIN (default build/src/adaqp), ADAQP_PYTHON (default .venv/bin/python),
#   NODES, AVG_DEGREE, WARMUP, EPOCHS, THREADS, PYG_ADJ (default "csr edge_index").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ADAQP_BIN:-$root/build/src/adaqp}
py=${ADAQP_PYTHON:-$root/.venv/bin/python}
work=${1:-$root/runs/pyg_compare}
nodes=${NODES:-200000}
degree=${AVG_DEGREE:-20}
warmup=${WARMUP:-3}
epochs=${EPOCHS:-10}
threads=${THREADS:-2}
read -r -a pyg_adj <<<"${PYG_ADJ:-csr edge_index}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if ! "$py" -c 'import torch_geometric' 2>/dev/null; then
  "$py" -m pip install --no-input 'torch_geometric==2.7.0'
fi
mkdir -p "$work"
graph="$work/graph-n$nodes-d$degree"
if [[ ! -d "$graph" ]]; then
  "$bin" generate --set dataset.format=synthetic --set "dataset.synthetic.num_nodes=$nodes" \
    --set "dataset.synthetic.avg_degree=$degree" --set dataset.synthetic.feat_dim=128 \
    --set dataset.synthetic.num_classes=16 --out "$graph"
fi
job=(--set dataset.format=numpy --set "dataset.path=$graph" --set dataset.self_loops=true
     --set dataset.row_normalize=false --set model.type=gcn --set model.layers=3
     --set model.hidden=256 --set model.dropout=0.5 --set training.lr=0.01
     --set training.weight_decay=5e-4 --set "training.epochs=$((warmup + epochs))"
     --set "training.eval_every=$((warmup + epochs))" --set output.log_level=warn)
results="$work/results.jsonl"
: >"$results"

# adaqp W THREADS: partitions once, then trains with each rank under GNU time.
adaqp() {
  local w=$1 t=$2 run="$work/adaqp-w$1"
  local part="$graph-p$w"
  [[ -d "$part" ]] || "$bin" partition "${job[@]}" --set "partition.parts=$w" --out "$part" >/dev/null
  rm -rf "$run"
  mkdir -p "$run"
  OMP_NUM_THREADS=$t mpirun --oversubscribe -np "$w" bash -c \
    '/usr/bin/time -f "%M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' "$run" \
    "$bin" train "${job[@]}" --set "partition.parts=$w" --set "partition.dir=$part" \
    --set "training.threads=$t" --set "output.dir=$run"
  "$py" - "$run" "$w" "$t" "$warmup" "$nodes" >>"$results" <<'PY'
import glob, json, statistics, sys
run, w, t, warmup, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
slowest, loss = {}, None
for line in open(f"{run}/metrics.jsonl"):
    r = json.loads(line)
    if r.get("event") == "summary":
        continue
    slowest[r["epoch"]] = max(slowest.get(r["epoch"], 0.0), r["epoch_time_s"])
    loss = r["loss"]
measured = [slowest[e] for e in sorted(slowest) if e > warmup]
rss = [int(open(f).read().split()[-1]) / 1024 for f in sorted(glob.glob(f"{run}/rss.*"))]
print(json.dumps({"system": "adaqp", "workers": w, "threads": t, "nodes": nodes,
                  "epochs_measured": len(measured), "median_epoch_s": statistics.median(measured),
                  "min_epoch_s": min(measured), "peak_rss_mib": max(rss),
                  "peak_rss_mib_per_rank": rss, "final_loss": loss}))
PY
}

pyg() {
  "$py" -W ignore "$root/benchmarks/pyg_compare/pyg_gcn.py" --data "$graph" --layers 3 \
    --hidden 256 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --warmup "$warmup" \
    --epochs "$epochs" --threads "$threads" --adj "$1" >>"$results"
}

adaqp 1 "$threads"
for adj in "${pyg_adj[@]}"; do pyg "$adj"; done
adaqp 2 1

"$py" - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    print(json.dumps(r))
base = next(r for r in rows if r["system"] == "adaqp" and r["workers"] == 1)
print(f"{'system':<16} {'W':>2} {'threads/rank':>12} {'epoch s (median)':>16} "
      f"{'vs adaqp W=1':>12} {'peak RSS MiB/rank':>17}")
for r in rows:
    print(f"{r['system']:<16} {r['workers']:>2} {r['threads']:>12} {r['median_epoch_s']:>16.3f} "
          f"{r['median_epoch_s'] / base['median_epoch_s']:>11.2f}x {r['peak_rss_mib']:>17.0f}")
PY
