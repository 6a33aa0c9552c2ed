#!/usr/bin/env bash
# Time to accuracy: adaqp full-graph GraphSAGE against DGL mini-batch GraphSAGE (neighbour
# sampling, benchmarks/tta/dgl_sage.py), on the same graphs, model, optimizer, features and cores.
#
#   systems   adaqp-w1      adaqp train, one process, THREADS threads (no exchange: mode is moot)
#             dgl           dgl_sage.py, THREADS threads, sampling in the training process
#             adaqp-w2      AdaQP (the default mode), 2 ranks over the virtual cluster at RATE
#             vanilla-w2    Vanilla, 2 ranks over the virtual cluster at RATE
#             (W=2 ranks take one thread each: the same cores as the W=1 systems.)
#   datasets  photo    Amazon Photo (../shared/datasets, split random)       BUDGET_PHOTO s
#             physics  Coauthor Physics (../shared/datasets, split random)   BUDGET_PHYSICS s
#             easy     generated: 50k nodes, 8 classes, 64 features, degree 10, homophily 0.8,
#                      feature signal 1, train/valid 60/20%                  BUDGET_EASY s
#             weak     generated: 200k nodes, 16 classes, 128 features, degree 10, homophily 0.5,
#                      feature signal 0.5, train/valid 10/5%                 BUDGET_WEAK s
#   model     GraphSAGE (mean), 2 layers, hidden 256, dropout 0.5, Adam without weight decay; the
#             graph symmetrized with one self-loop per node (both systems).
#
# Tuning (seed 0, the same number of trials for both): adaqp-w1 over learning rates ADAQP_LRS; DGL
# over DGL_GRID (lr/fan-outs/batch). Each system's configuration is the one with the highest
# validation accuracy within the budget (ties: the one reaching it sooner); W=2 runs use adaqp-w1's
# learning rate. Then seeds 1..SEEDS-1 for adaqp-w1 and dgl, and seeds 0..SEEDS-1 for the W=2
# systems, the systems alternated in order from seed to seed. Every run trains for the dataset's
# budget of training seconds (adaqp: an epoch count calibrated from a 6-epoch run, the curve cut at
# the budget; DGL: until the budget) and validates as it goes (adaqp: every epoch; DGL: every
# budget/50 training seconds); validation time is not training time. Start-up, for the curves
# against wall seconds, runs from the launch to the first step (DGL's one-time conversion of a
# dataset into its cache and METIS for W=2, done once before, are not counted).
#
# Usage: benchmarks/tta/run.sh [WORK_DIR]   (default runs/tta; needs root for the virtual cluster)
# Environment: ADAQP_BIN (build/src/adaqp), DGL_VENV (.venv-dgl, made by setup_dgl.sh when
#   missing), DATASETS ("photo physics easy weak"), SEEDS (3), RATE (1gbit), THREADS (2), W2
#   (1; 0 skips the W=2 systems), ADAQP_LRS ("0.003 0.01 0.03 0.1"), DGL_GRID ("0.003/10,10/1024
#   0.01/10,10/1024 0.003/5,5/512 0.01/5,5/512"), BUDGET_PHOTO (15), BUDGET_PHYSICS (30),
#   BUDGET_EASY (15), BUDGET_WEAK (60), ADAQP_SHARED_DATASETS (../shared/datasets).
# Writes, as it goes: provenance.json, runs.jsonl (one line per run, its whole curve) and each
# run's folder; at the end summary.json, summary.md (also printed) and curves-<dataset>.png.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
venv=${DGL_VENV:-$ADAQP_ROOT/.venv-dgl}
work=${1:-$ADAQP_ROOT/runs/tta}
shared=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
read -r -a datasets <<<"${DATASETS:-photo physics easy weak}"
read -r -a adaqp_lrs <<<"${ADAQP_LRS:-0.003 0.01 0.03 0.1}"
read -r -a dgl_grid <<<"${DGL_GRID:-0.003/10,10/1024 0.01/10,10/1024 0.003/5,5/512 0.01/5,5/512}"
seeds=${SEEDS:-3}
rate=${RATE:-1gbit}
threads=${THREADS:-2}
w2=${W2:-1}
export DGLBACKEND=pytorch

((${#adaqp_lrs[@]} == ${#dgl_grid[@]})) ||
  die "ADAQP_LRS has ${#adaqp_lrs[@]} trials, DGL_GRID ${#dgl_grid[@]}: tuning must give both the same budget"
((seeds >= 1)) || die "SEEDS must be at least 1, got $seeds"
require_adaqp
[[ -x $venv/bin/python ]] || "$ADAQP_ROOT/benchmarks/tta/setup_dgl.sh" "$venv"
py=$venv/bin/python

# budget DATASET: training seconds per run.
budget() {
  case $1 in
    photo) echo "${BUDGET_PHOTO:-15}" ;;
    physics) echo "${BUDGET_PHYSICS:-30}" ;;
    easy) echo "${BUDGET_EASY:-15}" ;;
    weak) echo "${BUDGET_WEAK:-60}" ;;
    *) die "unknown dataset '$1' (photo, physics, easy, weak)" ;;
  esac
}
for ds in "${datasets[@]}"; do budget "$ds" >/dev/null; done

mkdir -p "$work"
python3 "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"
runs=$work/runs.jsonl
: >"$runs"

# data DATASET: the dataset's directory (generated graphs are written once into WORK_DIR).
data() {
  local graph=()
  case $1 in
    photo) echo "$shared/amazon-photo"; return ;;
    physics) echo "$shared/coauthor-physics"; return ;;
    easy) graph=(50000 num_classes=8 feat_dim=64 avg_degree=10 homophily=0.8 feature_signal=1
                 train_fraction=0.6 valid_fraction=0.2) ;;
    weak) graph=(200000 num_classes=16 feat_dim=128 avg_degree=10 homophily=0.5
                 feature_signal=0.5 train_fraction=0.1 valid_fraction=0.05) ;;
  esac
  local dir=$work/graph-$1
  if [[ ! -d $dir ]]; then
    local sets
    mapfile -t sets < <(synthetic_graph "${graph[@]}" seed=1)
    "$ADAQP_BIN" generate "${sets[@]}" --out "$dir" >/dev/null
  fi
  echo "$dir"
}

# split DATASET: the split folder of a shared dataset (generated graphs carry theirs).
split() {
  if [[ $1 == photo || $1 == physics ]]; then echo random; fi
}

# job DATASET: adaqp's job for the dataset (prints one --set pair per line).
job() {
  local dir
  dir=$(data "$1")
  local sets=(dataset.path="$dir" dataset.symmetrize=true dataset.self_loops=true
              dataset.row_normalize=false training.weight_decay=0 training.eval_every=1)
  case $1 in
    photo | physics) sets+=(dataset.format=ogb dataset.split=random) ;;
    *) sets+=(dataset.format=numpy) ;;
  esac
  set_pairs "${sets[@]}"
  gnn_model 2 256 type=sage dropout=0.5
}

# adaqp_train DATASET SYSTEM RUN_DIR EPOCHS LR SEED: one training run into RUN_DIR (its log beside
# it); sets launch, the epoch seconds it started at.
adaqp_train() {
  local ds=$1 system=$2 run=$3 epochs=$4 lr=$5 seed=$6 sets
  launch=$(date +%s.%N)
  mapfile -t sets < <(job "$ds")
  sets+=(--set "training.epochs=$epochs" --set "training.lr=$lr" --set "training.seed=$seed"
         --set "output.dir=$run")
  rm -rf "$run"
  case $system in
    adaqp-w1)
      "$ADAQP_BIN" train "${sets[@]}" --set partition.parts=1 --set "training.threads=$threads" \
        >"$run.log" 2>&1 ;;
    adaqp-w2 | vanilla-w2)
      local mode=adaqp
      [[ $system == vanilla-w2 ]] && mode=vanilla
      "$ADAQP_ROOT/scripts/vcluster.sh" --hosts 2 --bandwidth "$rate" --timeout 1800 -- \
        "$ADAQP_BIN" train "${sets[@]}" --set partition.parts=2 \
        --set "partition.dir=$work/parts-$ds" --set "communication.mode=$mode" \
        --set training.threads=1 >"$run.log" 2>&1 ;;
  esac || { tail -n 20 "$run.log" >&2; exit 1; }
}

# epochs_for DATASET SYSTEM: epochs that fill the budget, from a 6-epoch run (its fastest epoch
# after the first).
epochs_for() {
  local ds=$1 system=$2 run=$work/calibrate-$1-$2
  adaqp_train "$ds" "$system" "$run" 6 0.01 0
  python3 "$ADAQP_ROOT/benchmarks/tta/summarise.py" epochs "$run" "$(budget "$ds")"
}

# adaqp DATASET SYSTEM PHASE LR SEED EPOCHS: a run and its line in runs.jsonl.
adaqp() {
  local ds=$1 system=$2 phase=$3 lr=$4 seed=$5 epochs=$6
  local run=$work/$ds-$system-lr$lr-s$seed
  log "$ds $system lr=$lr seed=$seed ($epochs epochs)"
  adaqp_train "$ds" "$system" "$run" "$epochs" "$lr" "$seed"
  python3 "$ADAQP_ROOT/benchmarks/tta/summarise.py" adaqp-run "$run" "$ds" "$system" "$phase" \
    "$lr" "$seed" "$(budget "$ds")" "$launch" >>"$runs"
}

# dgl DATASET PHASE CONFIG SEED: a run and its line in runs.jsonl. CONFIG is lr/fanouts/batch.
dgl() {
  local ds=$1 phase=$2 config=$3 seed=$4 lr fan batch
  IFS=/ read -r lr fan batch <<<"$config"
  local run=$work/$ds-dgl-lr$lr-f${fan/,/-}-b$batch-s$seed b
  b=$(budget "$ds")
  log "$ds dgl lr=$lr fan-outs=$fan batch=$batch seed=$seed"
  TTA_LAUNCH=$(date +%s.%N) OMP_NUM_THREADS=$threads \
    "$py" "$ADAQP_ROOT/benchmarks/tta/dgl_sage.py" --data "$(data "$ds")" --split "$(split "$ds")" \
    --cache "$work/dgl-cache-$ds.npz" --lr "$lr" --fanouts "$fan" --batch "$batch" \
    --seed "$seed" --budget-s "$b" --eval-every-s "$(python3 -c "print($b / 50)")" \
    --threads "$threads" >"$run.jsonl" 2>"$run.log" || { tail -n 20 "$run.log" >&2; exit 1; }
  python3 "$ADAQP_ROOT/benchmarks/tta/summarise.py" dgl-run "$run.jsonl" "$ds" "$phase" "$config" \
    "$seed" "$b" >>"$runs"
}

for ds in "${datasets[@]}"; do
  log "$ds: budget $(budget "$ds") training seconds a run"
  # DGL's cache is built before any timed run: its one-time conversion is not start-up.
  "$py" "$ADAQP_ROOT/benchmarks/tta/dgl_sage.py" --data "$(data "$ds")" --split "$(split "$ds")" \
    --cache "$work/dgl-cache-$ds.npz" --prepare-only >"$work/dgl-cache-$ds.json" 2>&1 ||
    { cat "$work/dgl-cache-$ds.json" >&2; exit 1; }
  e1=$(epochs_for "$ds" adaqp-w1)
  for i in "${!adaqp_lrs[@]}"; do
    if ((i % 2)); then
      dgl "$ds" grid "${dgl_grid[i]}" 0; adaqp "$ds" adaqp-w1 grid "${adaqp_lrs[i]}" 0 "$e1"
    else
      adaqp "$ds" adaqp-w1 grid "${adaqp_lrs[i]}" 0 "$e1"; dgl "$ds" grid "${dgl_grid[i]}" 0
    fi
  done
  lr=$(python3 "$ADAQP_ROOT/benchmarks/tta/summarise.py" choose "$runs" "$ds" adaqp-w1)
  config=$(python3 "$ADAQP_ROOT/benchmarks/tta/summarise.py" choose "$runs" "$ds" dgl)
  log "$ds: chose adaqp lr=$lr, dgl $config"
  if ((w2)); then
    if [[ ! -d $work/parts-$ds ]]; then
      mapfile -t sets < <(job "$ds")
      "$ADAQP_BIN" partition "${sets[@]}" --set partition.parts=2 --out "$work/parts-$ds" \
        >"$work/parts-$ds.log" 2>&1
    fi
    ea=$(epochs_for "$ds" adaqp-w2)
    ev=$(epochs_for "$ds" vanilla-w2)
  fi
  for ((s = 0; s < seeds; s++)); do
    order=(w1 dgl adaqp-w2 vanilla-w2)
    ((s % 2)) && order=(vanilla-w2 adaqp-w2 dgl w1)
    for sys in "${order[@]}"; do
      case $sys in
        w1) ((s > 0)) && adaqp "$ds" adaqp-w1 seed "$lr" "$s" "$e1" ;;
        dgl) ((s > 0)) && dgl "$ds" seed "$config" "$s" ;;
        adaqp-w2) ((w2)) && adaqp "$ds" adaqp-w2 seed "$lr" "$s" "$ea" ;;
        vanilla-w2) ((w2)) && adaqp "$ds" vanilla-w2 seed "$lr" "$s" "$ev" ;;
      esac
    done
  done
done

python3 "$ADAQP_ROOT/benchmarks/tta/summarise.py" report "$runs" "$work"
