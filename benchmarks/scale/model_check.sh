#!/usr/bin/env bash
# The memory model (memory_model.py, docs/memory.md) against measured peaks: a generated graph
# (default 200,000 nodes, 50 in-edges per node, 100 features, 47 classes), 3-layer GCN and
# GraphSAGE, hidden 256, in the vanilla, overlap and adaqp modes at W=1, 2 and 4, 3 epochs each.
# Per rank: the training phase's peak adaqp reports (metrics.jsonl), the model's prediction, and
# the error. All ranks share this machine's cores (--bind-to none, 2 threads in all).
# Usage: benchmarks/scale/model_check.sh [WORK_DIR]   (default runs/memory-model)
# Environment: ADAQP_BIN, ADAQP_PYTHON, NODES, AVG_DEGREE, MODELS, MODES, WORKERS.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
py=${ADAQP_PYTHON:-$ADAQP_ROOT/.venv/bin/python}
work=${1:-$ADAQP_ROOT/runs/memory-model}
nodes=${NODES:-200000}
degree=${AVG_DEGREE:-50}
read -r -a models <<<"${MODELS:-gcn sage}"
read -r -a modes <<<"${MODES:-vanilla overlap adaqp}"
read -r -a workers <<<"${WORKERS:-1 2 4}"
require_adaqp
mkdir -p "$work"
graph="$work/graph-n$nodes-d$degree"
if [[ ! -d "$graph" ]]; then
  mapfile -t gen < <(synthetic_graph "$nodes" "avg_degree=$degree" feat_dim=100 num_classes=47)
  "$ADAQP_BIN" generate "${gen[@]}" --out "$graph"
fi
mapfile -t job < <(
  set_pairs dataset.format=numpy "dataset.path=$graph" dataset.self_loops=true \
    dataset.row_normalize=false
  gnn_model 3 256 dropout=0.5
  set_pairs training.epochs=3 training.eval_every=3 training.device=cpu output.log_level=warn)
for w in "${workers[@]}"; do
  [[ -d "$graph-p$w" ]] || "$ADAQP_BIN" partition "${job[@]}" --set "partition.parts=$w" \
    --out "$graph-p$w" >/dev/null
  "$ADAQP_BIN" info --partition "$graph-p$w" --json >"$graph-p$w.json"
done
results="$work/results.jsonl"
: >"$results"
for model in "${models[@]}"; do
  for mode in "${modes[@]}"; do
    for w in "${workers[@]}"; do
      run="$work/$model-$mode-w$w"
      t=$((2 / w > 0 ? 2 / w : 1))
      mpirun --oversubscribe --bind-to none -np "$w" "$ADAQP_BIN" train "${job[@]}" \
        --set "model.type=$model" --set "communication.mode=$mode" --set "partition.parts=$w" \
        --set "partition.dir=$graph-p$w" --set "training.threads=$t" --set "output.dir=$run" \
        >"$run.log" 2>&1 || { tail -n 20 "$run.log"; echo "FAILED: $run" >&2; exit 1; }
      predicted=$("$py" "$ADAQP_ROOT/benchmarks/scale/memory_model.py" "$graph-p$w.json" \
        --feat 100 --classes 47 --model "$model" --mode "$mode")
      "$py" - "$run" "$model" "$mode" "$w" "$predicted" >>"$results" <<'PY'
import json, sys
run, model, mode, w, predicted = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
summary = json.loads(open(f"{run}/metrics.jsonl").read().splitlines()[-1])
training = summary["memory"]["phases"].index("training")
for rank, peaks in enumerate(summary["memory"]["peak_rss_bytes"]):
    p = predicted["parts"][rank]
    print(json.dumps({"model": model, "mode": mode, "workers": w, "rank": rank,
                      "measured_bytes": peaks[training], "predicted_bytes": p["predicted_peak_bytes"],
                      "error": p["predicted_peak_bytes"] / peaks[training] - 1,
                      "peak_at": p["epoch_peak_at"]}))
PY
    done
  done
done
"$py" - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | mode | W | rank | measured MiB | predicted MiB | error |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['model']} | {r['mode']} | {r['workers']} | {r['rank']} | {r['measured_bytes'] / 2**20:.0f} | "
          f"{r['predicted_bytes'] / 2**20:.0f} | {100 * r['error']:+.1f}% |")
errors = [abs(r["error"]) for r in rows]
print(f"\n{len(rows)} ranks: median |error| {100 * sorted(errors)[len(errors) // 2]:.1f}%, "
      f"largest {100 * max(errors):.1f}%")
PY
