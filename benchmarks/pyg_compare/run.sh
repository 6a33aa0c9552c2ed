#!/usr/bin/env bash
# adaqp against PyTorch Geometric, like for like, in one run on one generated graph (default 200k
# nodes, 4M directed edges, 128 features, 16 classes), 3 layers, hidden 256, dropout 0.5, Adam lr
# 0.01, weight decay 5e-4, W=1, on the CPU or on one GPU (DEVICE=cuda). Per model (MODELS: GCN,
# GraphSAGE-mean) two pairs (PAIRS), each the same model on both sides (pyg_train.py says what
# still differs):
#   cached  adaqp's default (A·X computed once, dropout after it)  vs PyG with the same layer 0
#   conv    adaqp, communication.feature_cache=false              vs PyG's stock GCNConv/SAGEConv
# ROUNDS rounds (default 3; 0 only generates and partitions the graph); in each, every pair runs both systems, in alternating order from round
# to round. A run's figure is the median epoch over its EPOCHS measured epochs after WARMUP (adaqp:
# the slowest rank's forward + backward + all-reduce + Adam step from metrics.jsonl; PyG: the same
# steps timed in Python, synchronised with the GPU on cuda); a system's figure is the median of its
# rounds, with their minimum and maximum. Peak memory: each process's peak resident set (GNU time
# for adaqp, getrusage in pyg_train.py), loading included; on cuda also the peak GPU memory in use
# while the system ran (nvidia-smi every 100 ms, minus the idle baseline, CUDA context included).
# WORKERS beyond 1 add adaqp's default at W ranks (on cuda sharing the one GPU over NCCL sockets).
# Threads: THREADS (default 2) for W=1 and PyG; THREADS/W per rank otherwise; ranks unbound.
#
# Usage: benchmarks/pyg_compare/run.sh [WORK_DIR]   (default runs/pyg_compare[-cuda])
# Environment: ADAQP_BIN (build/src/adaqp), ADAQP_PYTHON (.venv/bin/python), DEVICE (cpu|cuda),
#   NODES, AVG_DEGREE, FEAT (128), CLASSES (16), WARMUP (3), EPOCHS (10), ROUNDS (3), THREADS,
#   MODELS ("gcn sage"), PAIRS ("cached conv"), PYG_ADJ (csr|edge_index, default csr), WORKERS (1).
# Writes, as it goes: provenance.json, runs.jsonl (one line per run), every run's folder or JSON;
# at the end summary.json and summary.md (the table, also printed). Installs torch_geometric into
# the Python environment when it is missing (pure Python).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
py=${ADAQP_PYTHON:-$ADAQP_ROOT/.venv/bin/python}
device=${DEVICE:-cpu}
suffix=""
[[ $device != cuda ]] || suffix=-cuda
work_dir_arg "$@"
work=${1:-$ADAQP_ROOT/runs/pyg_compare$suffix}
nodes=${NODES:-200000}
degree=${AVG_DEGREE:-20}
feat=${FEAT:-128}
classes=${CLASSES:-16}
warmup=${WARMUP:-3}
epochs=${EPOCHS:-10}
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
adj=${PYG_ADJ:-csr}
read -r -a models <<<"${MODELS:-gcn sage}"
read -r -a pairs <<<"${PAIRS:-cached conv}"
read -r -a workers <<<"${WORKERS:-1}"
# Every setting before anything is installed or run.
[[ $device == cpu || $device == cuda ]] || die "DEVICE '$device' is neither cpu nor cuda"
[[ $adj == csr || $adj == edge_index ]] || die "PYG_ADJ '$adj' is neither csr nor edge_index"
for n in "nodes=$nodes" "avg_degree=$degree" "feat=$feat" "classes=$classes" "warmup=$warmup" \
  "epochs=$epochs" "rounds=$rounds" "threads=$threads" "${workers[@]/#/W=}"; do
  [[ ${n#*=} =~ ^[0-9]+$ ]] || die "${n%%=*} '${n#*=}' is not a whole number"
done
((warmup < epochs)) || die "WARMUP ($warmup) leaves no measured epoch of EPOCHS ($epochs)"
for m in "${models[@]}"; do
  [[ $m == gcn || $m == sage ]] || die "model '$m' is neither gcn nor sage"
done
for p in "${pairs[@]}"; do
  [[ $p == cached || $p == conv ]] || die "pair '$p' is neither cached nor conv"
done
require_adaqp

if ! "$py" -c 'import torch_geometric' 2>/dev/null; then
  "$py" -m pip install --no-input 'torch_geometric==2.7.0'
fi
mkdir -p "$work"
"$py" "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"
graph="$work/graph-n$nodes-d$degree-f$feat-c$classes"
if [[ ! -d "$graph" ]]; then
  log "generating $nodes nodes, average in-degree $degree, $feat features, $classes classes"
  mapfile -t gen < <(synthetic_graph "$nodes" "avg_degree=$degree" "feat_dim=$feat" \
    "num_classes=$classes")
  "$ADAQP_BIN" generate "${gen[@]}" --out "$graph" >/dev/null
fi
mapfile -t job < <(
  set_pairs dataset.format=numpy "dataset.path=$graph" dataset.self_loops=true \
    dataset.row_normalize=false
  gnn_model 3 256 dropout=0.5
  set_pairs training.lr=0.01 training.weight_decay=5e-4 "training.epochs=$((warmup + epochs))" \
    "training.eval_every=$((warmup + epochs))" "training.device=$device" \
    communication.mode=vanilla output.log_level=warn)
runs="$work/runs.jsonl"
: >"$runs"
rm -f "$work/summary.json" "$work/summary.md"  # an earlier run's

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

# adaqp ROUND MODEL PAIR W: one training run, a line in runs.jsonl.
adaqp() {
  local round=$1 model=$2 pair=$3 w=$4
  local t=$((threads / w > 0 ? threads / w : 1)) part="$graph-p$4"
  local run="$work/r$round-$model-$pair-adaqp-w$w" cache=true
  [[ $pair == conv ]] && cache=false
  rm -rf "$run"
  mkdir -p "$run"
  log "round $round: $model $pair adaqp W=$w"
  gpu_sampling "$run/gpu-mem.log"
  # shellcheck disable=SC2016
  OMP_NUM_THREADS=$t mpirun --oversubscribe --bind-to none -np "$w" bash -c \
    'export NCCL_HOSTID=adaqp-bench-$OMPI_COMM_WORLD_RANK
     [[ -x /usr/bin/time ]] || exec "$@"
     exec /usr/bin/time -f "%M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' \
    "$run" "$ADAQP_BIN" train "${job[@]}" --set "model.type=$model" --set "partition.parts=$w" \
    --set "partition.dir=$part" --set "communication.feature_cache=$cache" \
    --set "training.threads=$t" --set "output.dir=$run" >"$run/log" 2>&1 ||
    { tail -n 20 "$run/log" >&2; exit 1; }
  local gpu
  gpu=$(gpu_peak "$run/gpu-mem.log")
  "$py" - "$run" "$round" "$model" "$pair" "$w" "$t" "$warmup" "$nodes" "$device" "$gpu" \
    >>"$runs" <<'PY'
import glob, json, statistics, sys
run, rnd, model, pair = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
w, t, warmup, nodes = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
device, gpu = sys.argv[9], json.loads(sys.argv[10])
slowest, loss = {}, None
for line in open(f"{run}/metrics.jsonl"):
    r = json.loads(line)
    if r.get("event") == "summary":
        continue
    slowest[r["epoch"]] = max(slowest.get(r["epoch"], 0.0), r["epoch_time_s"])
    loss = r["loss"]
times = [slowest[e] for e in sorted(slowest)]
measured = times[warmup:]
rss = [int(open(f).read().split()[-1]) / 1024 for f in sorted(glob.glob(f"{run}/rss.*"))]
row = {"round": rnd, "pair": pair, "system": "adaqp", "model": model, "device": device,
       "workers": w, "threads": t, "nodes": nodes, "epochs_measured": len(measured),
       "epoch_times_s": times, "median_epoch_s": statistics.median(measured),
       "min_epoch_s": min(measured), "peak_rss_mib": max(rss) if rss else None,
       "peak_rss_mib_per_rank": rss, "final_loss": loss, "run_dir": run}
if gpu is not None:
    row["peak_gpu_mib"] = gpu
print(json.dumps(row))
PY
}

# pyg ROUND MODEL PAIR: one PyG run, a line in runs.jsonl.
pyg() {
  local round=$1 model=$2 pair=$3
  local log="$work/r$round-$model-$pair-pyg"
  log "round $round: $model $pair pyg"
  gpu_sampling "$log-gpu-mem.log"
  "$py" -W ignore "$ADAQP_ROOT/benchmarks/pyg_compare/pyg_train.py" --data "$graph" \
    --model "$model" --layer0 "$pair" --layers 3 --hidden 256 --dropout 0.5 --lr 0.01 \
    --weight-decay 5e-4 --warmup "$warmup" --epochs "$epochs" --threads "$threads" --adj "$adj" \
    --device "$device" >"$log.json" 2>"$log.err" || { tail -n 20 "$log.err" >&2; exit 1; }
  local gpu
  gpu=$(gpu_peak "$log-gpu-mem.log")
  "$py" - "$log.json" "$gpu" "$round" "$pair" >>"$runs" <<'PY'
import json, sys
row = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
gpu = json.loads(sys.argv[2])
row = {"round": int(sys.argv[3]), "pair": sys.argv[4], **row}
if gpu is not None:
    row["peak_gpu_mib"] = gpu
print(json.dumps(row))
PY
}

for w in 1 "${workers[@]}"; do
  part="$graph-p$w"
  [[ -d "$part" ]] ||
    "$ADAQP_BIN" partition "${job[@]}" --set "partition.parts=$w" --out "$part" >/dev/null
done
for ((r = 1; r <= rounds; r++)); do
  for model in "${models[@]}"; do
    for pair in "${pairs[@]}"; do
      if ((r % 2)); then adaqp "$r" "$model" "$pair" 1; pyg "$r" "$model" "$pair"
      else pyg "$r" "$model" "$pair"; adaqp "$r" "$model" "$pair" 1; fi
    done
    for w in "${workers[@]}"; do
      if ((w > 1)); then adaqp "$r" "$model" cached "$w"; fi
    done
  done
done

if ((rounds > 0)); then
  "$py" "$ADAQP_ROOT/benchmarks/pyg_compare/summarise.py" "$runs" "$work"
fi
