#!/usr/bin/env bash
# adaqp's R-GCN against PyTorch Geometric's RGCNConv, like for like, in one run on one generated
# ogbn-mag-shaped graph (issue 41): NODES nodes (default 1M; four node types, features on papers
# only, the labels on papers), reverse relations (7 relations), 2 layers, hidden 64, mean per
# relation, root weight and bias, dropout 0.5, Adam lr 0.01, weight decay 5e-4, W=1, THREADS
# threads both sides (default 2), on the CPU or one GPU (DEVICE=cuda). pyg_rgcn.py says what
# still differs. ROUNDS rounds (default 3), the two systems in alternating order from round to
# round. A run's figure is the median epoch over its EPOCHS measured epochs after WARMUP (adaqp:
# the epoch of metrics.jsonl; PyG: the same steps timed in Python); a system's figure the median of
# its rounds, with their minimum and maximum. Peak memory: each process's peak resident set (GNU
# time for adaqp, getrusage in pyg_rgcn.py), loading included. adaqp runs without its layer-0 cache
# (communication.feature_cache=false), so that both drop X before aggregating it every epoch.
#
# Usage: benchmarks/hetero/pyg_rgcn.sh [WORK_DIR]   (default runs/hetero-pyg)
# Environment: ADAQP_BIN (build/src/adaqp), ADAQP_PYTHON (.venv/bin/python), DEVICE (cpu|cuda),
#   NODES (1000000), FEAT (128), CLASSES (16), AVG_DEGREE (10), HIDDEN (64), BASES (0), WARMUP
#   (3), EPOCHS (10), ROUNDS (3), THREADS (2).
# Writes, as it goes: provenance.json, runs.jsonl (one line per run), every run's folder or JSON;
# at the end summary.md (also printed).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
py=${ADAQP_PYTHON:-$ADAQP_ROOT/.venv/bin/python}
device=${DEVICE:-cpu}
work=${1:-$ADAQP_ROOT/runs/hetero-pyg}
nodes=${NODES:-1000000}
hidden=${HIDDEN:-64}
bases=${BASES:-0}
warmup=${WARMUP:-3}
epochs=${EPOCHS:-10}
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
require_adaqp
"$py" -c 'import torch_geometric' 2>/dev/null || "$py" -m pip install --no-input 'torch_geometric==2.7.0'
mkdir -p "$work"
"$py" "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"
graph="$work/mag-n$nodes"
if [[ ! -d "$graph" ]]; then
  log "generating the ogbn-mag-shaped graph of $nodes nodes"
  mapfile -t gen < <(synthetic_graph "$nodes" heterogeneous=true "num_classes=${CLASSES:-16}" \
    "feat_dim=${FEAT:-128}" "avg_degree=${AVG_DEGREE:-10}")
  "$ADAQP_BIN" generate "${gen[@]}" --out "$graph" >/dev/null
fi
mapfile -t job < <(
  set_pairs "dataset.path=$graph" dataset.add_reverse=true dataset.self_loops=false
  gnn_model 2 "$hidden" type=rgcn "num_bases=$bases" dropout=0.5
  set_pairs training.lr=0.01 training.weight_decay=5e-4 "training.epochs=$((warmup + epochs))" \
    "training.eval_every=$((warmup + epochs))" "training.device=$device" \
    "training.threads=$threads" communication.mode=vanilla partition.parts=1 \
    communication.feature_cache=false \
    "partition.dir=$graph-p1" output.log_level=warn)
runs="$work/runs.jsonl"
: >"$runs"

# adaqp ROUND: one training run at W=1, a line in runs.jsonl.
adaqp() {
  local run="$work/r$1-adaqp"
  rm -rf "$run"
  mkdir -p "$run"
  log "round $1: adaqp"
  OMP_NUM_THREADS=$threads /usr/bin/time -f "%M" -o "$run/rss" "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$run" >"$run/log" 2>&1 || { tail -n 20 "$run/log" >&2; exit 1; }
  "$py" - "$run" "$1" "$warmup" "$device" "$threads" >>"$runs" <<'PY'
import json, statistics, sys
run, rnd, warmup, device, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
records = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
epochs = [r for r in records if r.get("event") != "summary"]
times = [r["epoch_time_s"] for r in sorted(epochs, key=lambda r: r["epoch"])]
measured = times[warmup:]
print(json.dumps({"round": rnd, "system": "adaqp", "model": "rgcn", "device": device,
                  "workers": 1, "threads": threads, "epochs_measured": len(measured),
                  "epoch_times_s": times, "median_epoch_s": statistics.median(measured),
                  "min_epoch_s": min(measured),
                  "peak_rss_mib": int(open(f"{run}/rss").read().split()[-1]) / 1024,
                  "final_loss": epochs[-1]["loss"], "run_dir": run}))
PY
}

# pyg ROUND: one PyG run, a line in runs.jsonl.
pyg() {
  local out="$work/r$1-pyg"
  log "round $1: pyg"
  "$py" -W ignore "$ADAQP_ROOT/benchmarks/hetero/pyg_rgcn.py" --data "$graph" --hidden "$hidden" \
    --bases "$bases" --warmup "$warmup" --epochs "$epochs" --threads "$threads" \
    --device "$device" >"$out.json" 2>"$out.err" || { tail -n 20 "$out.err" >&2; exit 1; }
  "$py" -c 'import json, sys; print(json.dumps({"round": int(sys.argv[2]), **json.loads(open(sys.argv[1]).read().splitlines()[-1])}))' \
    "$out.json" "$1" >>"$runs"
}

[[ -d "$graph-p1" ]] || "$ADAQP_BIN" partition "${job[@]}" --out "$graph-p1" >/dev/null
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then adaqp "$r"; pyg "$r"; else pyg "$r"; adaqp "$r"; fi
done

"$py" - "$runs" "$work/summary.md" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
lines = ["| system | rounds | epoch s, median (min-max) | peak RSS MiB, median | final loss |",
         "|---|---|---|---|---|"]
med = {}
for system in ("adaqp", "pyg"):
    rs = [r for r in runs if r["system"] == system]
    t = [r["median_epoch_s"] for r in rs]
    med[system] = statistics.median(t)
    lines.append("| %s | %d | %.3f (%.3f-%.3f) | %.0f | %.4f |" % (
        system, len(rs), med[system], min(t), max(t),
        statistics.median(r["peak_rss_mib"] for r in rs), rs[-1]["final_loss"]))
lines.append("")
lines.append("PyG / adaqp epoch time: %.2fx" % (med["pyg"] / med["adaqp"]))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
