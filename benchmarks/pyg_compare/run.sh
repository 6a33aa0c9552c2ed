#!/usr/bin/env bash
# Full-graph GCN training: `adaqp train` on W=1 and W=2 workers against PyTorch Geometric
# (pyg_gcn.py: a GCNConv stack), in one run, on one generated graph (default 200k nodes, 4M
# directed edges, 128 features, 16 classes), 3 layers, hidden 256, dropout 0.5, Adam lr 0.01,
# weight decay 5e-4, on the CPU or on one GPU (DEVICE=cuda).
# Each system runs WARMUP + EPOCHS training epochs; the epoch time is the median of the last
# EPOCHS (adaqp: per epoch the slowest rank's forward + backward + all-reduce + Adam step, from
# metrics.jsonl; PyG: the same steps timed in Python, synchronised with the GPU on cuda). Peak
# memory: the peak resident set size of each process (GNU time for adaqp's ranks, getrusage in
# pyg_gcn.py), graph loading included; on cuda also the peak GPU memory in use while the system
# ran (nvidia-smi sampled every 100 ms, minus what was in use before it started; CUDA contexts
# included, all ranks together).
# Threads: THREADS (default 2) for adaqp W=1 and for PyG; THREADS/2 per worker for W=2. Ranks are
# not bound to cores (--bind-to none), so each gets the threads it is given.
# On the CPU PyG runs twice: with edge_index (its default scatter path) and with a torch.sparse CSR
# adjacency. On cuda, W=2 shares the one GPU (a distinct NCCL_HOSTID per rank, NCCL over sockets).
# Prints one JSON line per measurement and a table with each system's ratio to adaqp W=1; installs
# torch_geometric into the Python environment when it is missing (pure Python).
#
# Usage: benchmarks/pyg_compare/run.sh [WORK_DIR]   (default runs/pyg_compare[-cuda])
# Environment: ADAQP_BIN (default build/src/adaqp), ADAQP_PYTHON (default .venv/bin/python),
#   DEVICE (cpu or cuda), NODES, AVG_DEGREE, FEAT (128), CLASSES (16), WARMUP, EPOCHS, THREADS,
#   PYG_ADJ (default "csr edge_index" on the CPU, "csr" on cuda), WORKERS (default "1 2").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ADAQP_BIN:-$root/build/src/adaqp}
py=${ADAQP_PYTHON:-$root/.venv/bin/python}
device=${DEVICE:-cpu}
suffix=$([[ $device == cuda ]] && echo "-cuda" || true)
work=${1:-$root/runs/pyg_compare$suffix}
nodes=${NODES:-200000}
degree=${AVG_DEGREE:-20}
feat=${FEAT:-128}
classes=${CLASSES:-16}
warmup=${WARMUP:-3}
epochs=${EPOCHS:-10}
threads=${THREADS:-2}
read -r -a workers <<<"${WORKERS:-1 2}"
default_adj=$([[ $device == cuda ]] && echo "csr" || echo "csr edge_index")
read -r -a pyg_adj <<<"${PYG_ADJ:-$default_adj}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if ! "$py" -c 'import torch_geometric' 2>/dev/null; then
  "$py" -m pip install --no-input 'torch_geometric==2.7.0'
fi
mkdir -p "$work"
graph="$work/graph-n$nodes-d$degree-f$feat-c$classes"
if [[ ! -d "$graph" ]]; then
  "$bin" generate --set dataset.format=synthetic --set "dataset.synthetic.num_nodes=$nodes" \
    --set "dataset.synthetic.avg_degree=$degree" --set "dataset.synthetic.feat_dim=$feat" \
    --set "dataset.synthetic.num_classes=$classes" --out "$graph"
fi
job=(--set dataset.format=numpy --set "dataset.path=$graph" --set dataset.self_loops=true
     --set dataset.row_normalize=false --set model.type=gcn --set model.layers=3
     --set model.hidden=256 --set model.dropout=0.5 --set training.lr=0.01
     --set training.weight_decay=5e-4 --set "training.epochs=$((warmup + epochs))"
     --set "training.eval_every=$((warmup + epochs))" --set "training.device=$device"
     --set communication.mode=vanilla
     --set output.log_level=warn)
results="$work/results.jsonl"
: >"$results"

# gpu_sampling FILE / gpu_peak FILE: the GPU memory in use, sampled while a system runs.
gpu_sampling() {
  [[ $device == cuda ]] || return 0
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$1" &
  sampler=$!
  sleep 0.3
}
gpu_peak() {
  [[ $device == cuda ]] || { echo null; return 0; }
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  awk 'NR == 1 {base = $1} {if ($1 > peak) peak = $1} END {print peak - base}' "$1"
}

# adaqp W THREADS: partitions once, then trains with each rank under GNU time.
adaqp() {
  local w=$1 t=$2 run="$work/adaqp-w$1"
  local part="$graph-p$w"
  [[ -d "$part" ]] || "$bin" partition "${job[@]}" --set "partition.parts=$w" --out "$part" >/dev/null
  rm -rf "$run"
  mkdir -p "$run"
  gpu_sampling "$run/gpu-mem.log"
  # shellcheck disable=SC2016
  OMP_NUM_THREADS=$t mpirun --oversubscribe --bind-to none -np "$w" bash -c \
    'export NCCL_HOSTID=adaqp-bench-$OMPI_COMM_WORLD_RANK
     [[ -x /usr/bin/time ]] || exec "$@"
     exec /usr/bin/time -f "%M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' \
    "$run" "$bin" train "${job[@]}" --set "partition.parts=$w" --set "partition.dir=$part" \
    --set "training.threads=$t" --set "output.dir=$run"
  local gpu
  gpu=$(gpu_peak "$run/gpu-mem.log")
  "$py" - "$run" "$w" "$t" "$warmup" "$nodes" "$device" "$gpu" >>"$results" <<'PY'
import glob, json, statistics, sys
run, w, t, warmup, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
device, gpu = sys.argv[6], json.loads(sys.argv[7])
slowest, loss = {}, None
for line in open(f"{run}/metrics.jsonl"):
    r = json.loads(line)
    if r.get("event") == "summary":
        continue
    slowest[r["epoch"]] = max(slowest.get(r["epoch"], 0.0), r["epoch_time_s"])
    loss = r["loss"]
measured = [slowest[e] for e in sorted(slowest) if e > warmup]
rss = [int(open(f).read().split()[-1]) / 1024 for f in sorted(glob.glob(f"{run}/rss.*"))]
row = {"system": "adaqp", "device": device, "workers": w, "threads": t, "nodes": nodes,
       "epochs_measured": len(measured), "median_epoch_s": statistics.median(measured),
       "min_epoch_s": min(measured), "peak_rss_mib": max(rss) if rss else None,
       "peak_rss_mib_per_rank": rss, "final_loss": loss}
if gpu is not None:
    row["peak_gpu_mib"] = gpu
print(json.dumps(row))
PY
}

pyg() {
  local log="$work/pyg-$1"
  gpu_sampling "$log-gpu-mem.log"
  "$py" -W ignore "$root/benchmarks/pyg_compare/pyg_gcn.py" --data "$graph" --layers 3 \
    --hidden 256 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --warmup "$warmup" \
    --epochs "$epochs" --threads "$threads" --adj "$1" --device "$device" >"$log.json"
  local gpu
  gpu=$(gpu_peak "$log-gpu-mem.log")
  "$py" - "$log.json" "$gpu" >>"$results" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).read())
gpu = json.loads(sys.argv[2])
if gpu is not None:
    row["peak_gpu_mib"] = gpu
print(json.dumps(row))
PY
}

for w in "${workers[@]}"; do
  if ((w == 1)); then
    adaqp 1 "$threads"
    for adj in "${pyg_adj[@]}"; do pyg "$adj"; done
  else
    adaqp "$w" "$((threads / w > 0 ? threads / w : 1))"
  fi
done

"$py" - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    print(json.dumps(r))
base = next(r for r in rows if r["system"] == "adaqp" and r["workers"] == 1)
gpu = "peak_gpu_mib" in base
print(f"{'system':<16} {'device':>6} {'W':>2} {'threads/rank':>12} {'epoch s (median)':>16} "
      f"{'vs adaqp W=1':>12} {'peak RSS MiB/rank':>17}" + (f" {'peak GPU MiB':>12}" if gpu else ""))
for r in rows:
    line = (f"{r['system']:<16} {r['device']:>6} {r['workers']:>2} {r['threads']:>12} "
            f"{r['median_epoch_s']:>16.3f} {r['median_epoch_s'] / base['median_epoch_s']:>11.2f}x "
            f"{r['peak_rss_mib'] or float('nan'):>17.0f}")
    if gpu:
        line += f" {r.get('peak_gpu_mib', float('nan')):>12.0f}"
    print(line)
PY
