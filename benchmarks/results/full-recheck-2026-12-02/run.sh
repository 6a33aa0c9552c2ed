#!/usr/bin/env bash
# A stall of the machine during the check of full precision, made on purpose: two busy loops (one a
# core) start when the slowest rank's epoch 2 is recorded and run for HOG_S seconds, over the epochs
# that check full precision (3 cold, 4-5 timed). The links sweep's job (its quick graph, 50k nodes;
# 3 layers, hidden 128), W=2 over shared memory, one thread a rank, EPOCHS epochs; each round runs
# Vanilla and mode adaqp with two builds ($AB_ROOT/ab-base, $AB_ROOT/ab-head: build/src/adaqp),
# the order reversed on even rounds, each with the same stall.
# Usage: run.sh OUT_DIR   Environment: AB_ROOT (/work/ab), MODELS ("gcn sage"), ROUNDS (3),
#   EPOCHS (60), HOG_S (2.0; 0: no stall), SIDES ("vanilla base head"), GRAPH (a generated graph's
#   folder; made if missing).
# Writes OUT_DIR/rR-MODEL-SIDE/ (metrics.jsonl) and .log per run, and runs.jsonl: per run each
# epoch's slowest-rank time, whether it ran Vanilla's schedule, had an exchange at full precision,
# or had full precision given up.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
out=$(realpath -m "$1")
ab=${AB_ROOT:-/work/ab}
read -r -a models <<<"${MODELS:-gcn sage}"
rounds=${ROUNDS:-3}
epochs=${EPOCHS:-60}
hog_s=${HOG_S:-2.0}
read -r -a sides <<<"${SIDES:-vanilla base head}"
graph=${GRAPH:-$out/graph}
bin=$ab/ab-head/build/src/adaqp
mkdir -p "$out"
if [[ ! -d $graph ]]; then
  "$bin" generate --set dataset.format=synthetic --set dataset.synthetic.num_nodes=50000 \
    --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128 \
    --set dataset.synthetic.num_classes=8 --set dataset.synthetic.seed=1 --out "$graph" >/dev/null
fi
job=(--set dataset.format=numpy --set "dataset.path=$graph" --set dataset.self_loops=true
  --set model.layers=3 --set model.hidden=128 --set partition.parts=2
  --set "training.epochs=$epochs" --set "training.eval_every=$epochs" --set training.threads=1
  --set training.device=cpu)
[[ -d $graph-p2 ]] || "$bin" partition "${job[@]}" --out "$graph-p2" >/dev/null

# one ROUND MODEL SIDE: SIDE vanilla (head's binary), base or head (mode adaqp).
one() {
  local round=$1 model=$2 side=$3 exe=$bin mode=adaqp
  local run=$out/r$round-$model-$side
  [[ $side == base ]] && exe=$ab/ab-base/build/src/adaqp
  [[ $side == vanilla ]] && mode=vanilla
  rm -rf "$run"
  mpirun --oversubscribe --bind-to none -np 2 "$exe" train "${job[@]}" --set "model.type=$model" \
    --set "partition.dir=$graph-p2" --set "output.dir=$run" --set "communication.mode=$mode" \
    >"$run.log" 2>&1 &
  local train=$!
  if [[ $hog_s != 0 ]]; then
    until [[ -f $run/metrics.jsonl ]] && (($(grep -c '"epoch": *2,' "$run/metrics.jsonl") >= 2)); do
      kill -0 "$train" 2>/dev/null || break
      sleep 0.005
    done
    for _ in 1 2; do timeout "$hog_s" bash -c 'while :; do :; done' & done
  fi
  wait "$train"
  wait
  python3 - "$run" "$round" "$model" "$side" >>"$out/runs.jsonl" <<'PY'
import json, sys
run, rnd, model, side = sys.argv[1:5]
ep = {}
for line in open(f"{run}/metrics.jsonl"):
    r = json.loads(line)
    if r.get("event") or "epoch_time_s" not in r:
        continue
    e = ep.setdefault(r["epoch"], {"s": 0.0, "vanilla": False, "full": False, "given_up": False})
    e["s"] = max(e["s"], r["epoch_time_s"])
    e["vanilla"] |= bool(r.get("assign_vanilla_schedule", False))
    e["given_up"] |= bool(r.get("assign_full_precision_given_up", False))
    hist = r.get("bits_hist")
    if hist:
        e["full"] |= any(layer[3] > 0 for d in ("fwd", "bwd") for layer in hist[d])
print(json.dumps({"round": int(rnd), "model": model, "side": side,
                  "epochs": [dict(epoch=k, **v) for k, v in sorted(ep.items())]}))
PY
  echo "round $round $model $side: $(tail -c 300 "$run.log" | tr '\n' ' ' | cut -c1-200)" >&2
}

for ((r = 1; r <= rounds; r++)); do
  order=("${sides[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#sides[@]} - 1; i >= 0; i--)); do order+=("${sides[i]}"); done
  fi
  for model in "${models[@]}"; do
    for side in "${order[@]}"; do one "$r" "$model" "$side"; done
  done
done
