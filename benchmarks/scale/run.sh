#!/usr/bin/env bash
# The paper's scale on one machine: a generated graph of ogbn-products' shape (2,449,029 nodes,
# about 50 in-edges per node plus a self-loop, 100 features, 47 classes) trained for a few epochs
# with a 3-layer model, hidden 256, dropout 0.5, at W=1 and W=2 on this machine, per model (GCN,
# GraphSAGE). Per run: the epoch time (median of the epochs after the first, the slowest rank's),
# each rank's peak resident memory by phase as adaqp reports it, GNU time's peak of the process
# (the last epoch's: adaqp resets the kernel's peak per phase and epoch), the memory model's
# prediction (benchmarks/scale/memory_model.py, docs/memory.md) and, on a GPU, the peak of
# libtorch's device allocator. PyTorch Geometric (CSR GCNConv) runs in the same run on the largest
# graph it fits (PYG_NODES, default 1,000,000 nodes of the same shape; at products' size it needs
# about 39 GiB), beside adaqp at W=1 and W=2 on that graph (benchmarks/pyg_compare/run.sh).
#
# Usage: benchmarks/scale/run.sh [WORK_DIR]   (default runs/scale, runs/scale-cuda on a GPU)
# Environment: ADAQP_BIN (default build/src/adaqp), ADAQP_PYTHON (default .venv/bin/python),
#   DEVICE (cpu or cuda), NODES (2449029), AVG_DEGREE (50), FEAT (100), CLASSES (47), EPOCHS (3),
#   MODELS ("gcn sage"), WORKERS ("1 2"), THREADS (2: per rank at W=1, THREADS/W per rank
#   otherwise), PYG_NODES (1000000; 0 skips the PyG comparison).
# Writes WORK_DIR/provenance.json, results.jsonl (one JSON line per run) and results.md (the table).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
work_dir_arg "$@"
py=${ADAQP_PYTHON:-$ADAQP_ROOT/.venv/bin/python}
device=${DEVICE:-cpu}
suffix=""
[[ $device != cuda ]] || suffix=-cuda
work=${1:-$ADAQP_ROOT/runs/scale$suffix}
nodes=${NODES:-2449029}
degree=${AVG_DEGREE:-50}
feat=${FEAT:-100}
classes=${CLASSES:-47}
epochs=${EPOCHS:-3}
threads=${THREADS:-2}
pyg_nodes=${PYG_NODES:-1000000}
read -r -a models <<<"${MODELS:-gcn sage}"
read -r -a workers <<<"${WORKERS:-1 2}"
[[ -x /usr/bin/time ]] || { echo "benchmarks/scale: GNU time (/usr/bin/time) is needed" >&2; exit 1; }
require_adaqp
mkdir -p "$work"
"$py" "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"

graph="$work/graph-n$nodes-d$degree-f$feat-c$classes"
if [[ ! -d "$graph" ]]; then
  log "generating $nodes nodes, average in-degree $degree, $feat features, $classes classes"
  mapfile -t gen < <(synthetic_graph "$nodes" "avg_degree=$degree" "feat_dim=$feat" \
    "num_classes=$classes")
  "$ADAQP_BIN" generate "${gen[@]}" --out "$graph"
fi
mapfile -t job < <(
  set_pairs dataset.format=numpy "dataset.path=$graph" dataset.self_loops=true \
    dataset.row_normalize=false
  gnn_model 3 256 dropout=0.5
  set_pairs training.lr=0.01 training.weight_decay=5e-4 "training.epochs=$epochs" \
    "training.eval_every=$epochs" "training.device=$device" communication.mode=vanilla \
    output.log_level=info)
results="$work/results.jsonl"
: >"$results"
rm -f "$work/results.md"  # an earlier run's table, which this run replaces
failed=0

for w in "${workers[@]}"; do
  part="$graph-p$w"
  if [[ ! -d "$part" ]]; then
    log "partitioning into $w part(s) (METIS)"
    /usr/bin/time -f "partition: %e s, peak %M KiB" \
      "$ADAQP_BIN" partition "${job[@]}" --set "partition.parts=$w" --out "$part" >"$part.log" 2>&1
    tail -n 1 "$part.log"
  fi
  "$ADAQP_BIN" info --partition "$part" --json >"$part.json"
done

for model in "${models[@]}"; do
  for w in "${workers[@]}"; do
    t=$((threads / w > 0 ? threads / w : 1))
    run="$work/$model-w$w"
    rm -rf "$run"
    mkdir -p "$run"
    log "$model, W=$w ($t thread(s) per rank), $epochs epochs"
    # shellcheck disable=SC2016
    OMP_NUM_THREADS=$t mpirun --oversubscribe --bind-to none -np "$w" bash -c \
      'export NCCL_HOSTID=adaqp-scale-$OMPI_COMM_WORLD_RANK
       exec /usr/bin/time -f "%M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' \
      "$run" "$ADAQP_BIN" train "${job[@]}" --set "model.type=$model" --set "partition.parts=$w" \
      --set "partition.dir=$graph-p$w" --set "training.threads=$t" --set "output.dir=$run" \
      >"$run/log" 2>&1 || {
      tail -n 20 "$run/log"
      log "FAILED: $model W=$w"
      failed=$((failed + 1))
      continue
    }
    grep -A4 "summary:" "$run/log" | sed 's/^/    /'
    predicted=null
    if [[ $device == cpu ]]; then
      predicted=$("$py" "$ADAQP_ROOT/benchmarks/scale/memory_model.py" "$graph-p$w.json" \
        --feat "$feat" --classes "$classes" --model "$model")
    fi
    "$py" - "$run" "$model" "$w" "$t" "$nodes" "$device" "$predicted" >>"$results" <<'PY'
import glob, json, statistics, sys
run, model, w, t, nodes, device = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
predicted = json.loads(sys.argv[7])
recs = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
summary = recs[-1]
slowest = {}
for r in recs:
    if "epoch" in r and "event" not in r:
        slowest[r["epoch"]] = max(slowest.get(r["epoch"], 0.0), r["epoch_time_s"])
measured = [slowest[e] for e in sorted(slowest)][1:] or list(slowest.values())
mem = summary["memory"]
row = {"system": "adaqp", "model": model, "device": device, "workers": w, "threads": t,
       "nodes": nodes, "epochs_measured": len(measured),
       "median_epoch_s": statistics.median(measured), "phases": mem["phases"],
       "peak_rss_bytes": mem["peak_rss_bytes"],
       "peak_rss_mib": [max(p) / 2**20 for p in mem["peak_rss_bytes"]],
       "gnu_time_mib": [int(open(f).read().split()[-1]) / 1024 for f in sorted(glob.glob(f"{run}/rss.*"))],
       "final_loss": [r["loss"] for r in recs if "epoch" in r and "event" not in r][-1]}
if "device_peak_bytes" in mem:
    row["device_peak_mib"] = [max(p) / 2**20 for p in mem["device_peak_bytes"]]
if predicted is not None:
    row["predicted_mib"] = [p["predicted_peak_bytes"] / 2**20 for p in predicted["parts"]]
print(json.dumps(row))
PY
  done
done

if ((pyg_nodes > 0)); then
  log "PyG beside adaqp on $pyg_nodes nodes of the same shape (benchmarks/pyg_compare/run.sh)"
  NODES=$pyg_nodes AVG_DEGREE=$degree FEAT=$feat CLASSES=$classes WARMUP=1 EPOCHS=$((epochs - 1)) \
    THREADS=$threads PYG_ADJ=csr DEVICE=$device ADAQP_BIN=$ADAQP_BIN ADAQP_PYTHON=$py \
    "$ADAQP_ROOT/benchmarks/pyg_compare/run.sh" "$work/pyg" | tail -n 4
  "$py" - "$work/pyg/runs.jsonl" >>"$results" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r.setdefault("model", "gcn")
    r["comparison"] = True
    print(json.dumps(r))
PY
fi

"$py" - "$results" "$work/results.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def gib(values):
    return " / ".join(f"{v / 1024:.2f}" for v in values) if values else "-"
lines = ["| system | model | nodes | W | threads/rank | epoch s (median) | peak GiB per rank | "
         "GNU time GiB | model GiB | device GiB |", "|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    # adaqp's own report where there is one (max over its phases); else the process's getrusage.
    peak = r["peak_rss_mib"] if isinstance(r.get("peak_rss_mib"), list) else \
        r.get("peak_rss_mib_per_rank") or [r["peak_rss_mib"]]
    gnu = r.get("gnu_time_mib") or r.get("peak_rss_mib_per_rank") or []
    device = r.get("device_peak_mib") or ([r["peak_gpu_mib"]] if r.get("peak_gpu_mib") is not None else [])
    lines.append(f"| {r['system']} | {r['model']} | {r['nodes']:,} | {r['workers']} | {r['threads']} | "
                 f"{r['median_epoch_s']:.2f} | {gib(peak)} | {gib(gnu)} | "
                 f"{gib(r.get('predicted_mib'))} | {gib(device)} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
((failed == 0)) || die "$failed run(s) failed (their logs: $work/<model>-w<W>/log); results.md holds the others"
