#!/usr/bin/env bash
# A GPU session's work (15 minutes of device time in all) in steps; each step writes its results
# to $OUT as it goes and keeps its work in /tmp/adaqp-gpu-session, so that a step cut by the
# call's deadline loses nothing already measured and a next call on the warm machine goes on:
#   checks   every group of scripts/gpu_checks.sh (about 2.5 minutes on an H200), and beside it,
#            accuracy only (their epoch times share the GPU with the checks): the gpu reproduction
#            profile's accuracy phase (Cora, the four modes, W=2, 2 seeds) and TF32 against FP32
#            (benchmarks/precision/run.sh: Cora and Coauthor Physics, 3 seeds); meanwhile the
#            ogbn-products-shaped graph for `pyg` and `scale` is generated.
#   pyg      benchmarks/pyg_compare at ogbn-products' shape (2,449,029 nodes, degree 50, 100
#            features, 47 classes), W=1, both like-for-like pairs, 3 alternated rounds; MODELS
#            (default gcn) and ROUNDS override.
#   scale    benchmarks/scale with DEVICE=cuda on the same graph: GCN and GraphSAGE at W=1 and 2;
#            MODELS and WORKERS override.
#   profile  the gpu reproduction profile's throughput (the four modes at W=2 and 4, the paper's
#            objective).
#   links    the device codec alone (bench_quant --devices cuda at the exchanges' widths 256 and
#            47, about 10 s), then benchmarks/links on the one GPU (its ranks over NCCL sockets) on
#            the gpu profile's graph: Vanilla, AdaQP (objective seconds, the width solve beside the
#            epoch) and AdaQP with the solve inline (before each epoch) at W=2 and 4, 3 alternated
#            rounds (about 6 minutes); MODES (e.g. adaqp-paper: the paper's objective; adaqp-p and
#            adaqp-q: AdaQP's compute taken apart), MODELS (default gcn; sage), WORKERS and ROUNDS
#            override.
# Run on the GPU machine through the shared on-device script (it builds on a machine's first call
# and exports B), with the call's deadline; a step starts only while it leaves the step a minute:
#   export ADAQP_DEADLINE=$(($(date +%s) + 570)); bash .gpu/on-device.sh bash scripts/gpu_session.sh checks pyg
# Results in $OUT (the device tool brings back 8 files): per step STEP.txt (its log and summary)
# and STEP.tgz (its raw results and provenance.json: commit, GPU, driver, versions, command;
# graphs, partitions and parameters left out); `checks` also accuracy.txt/.tgz and
# precision.txt/.tgz. Exit status: non-zero when a check failed or a step did not finish.
set -uo pipefail
: "${B:?the CUDA build directory}" "${OUT:?the folder that comes back from the device machine}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($#)) || { echo "usage: gpu_session.sh checks|pyg|scale|profile|links ..." >&2; exit 2; }
for s in "$@"; do
  [[ $s =~ ^(checks|pyg|scale|profile|links)$ ]] ||
    { echo "gpu_session: unknown step '$s'" >&2; exit 2; }
done
deadline=${ADAQP_DEADLINE:-$(($(date +%s) + 500))}
left() { echo $((deadline - $(date +%s))); }
# bounded MARGIN: seconds for a command that must end MARGIN seconds before the deadline; at least
# 1 (timeout 0 would mean no limit at all).
bounded() {
  local s=$(($(left) - $1))
  echo $((s > 0 ? s : 1))
}
work=/tmp/adaqp-gpu-session
mkdir -p "$work"
export ADAQP_SHARED_DATASETS=${ADAQP_SHARED_DATASETS:-$ROOT/.gpu/datasets}
export ADAQP_BIN=$B/src/adaqp ADAQP_PYTHON=python3 DEVICE=cuda
# ogbn-products' shape, shared by the pyg and scale steps.
export NODES=2449029 AVG_DEGREE=50 FEAT=100 CLASSES=47
graph_name=graph-n$NODES-d$AVG_DEGREE-f$FEAT-c$CLASSES
status=0

# pack NAME DIR: DIR's results into $OUT/NAME.tgz, without graphs, partitions and parameters.
pack() {
  tar -czf "$OUT/$1.tgz" -C "$(dirname "$2")" --exclude=graph --exclude='graph-*' \
    --exclude='*.bin' --exclude='partition*' "$(basename "$2")" 2>/dev/null
}

# products_graph: generates the ogbn-products-shaped graph and its one-part partition, once (a
# run of pyg_compare starts its runs.jsonl afresh: not over an earlier pyg step's).
products_graph() {
  [[ -d "$work/pyg/$graph_name-p1" ]] && return 0
  ROUNDS=0 WORKERS=1 timeout "$(bounded 20)" \
    bash "$ROOT/benchmarks/pyg_compare/run.sh" "$work/pyg" >"$work/graph.log" 2>&1
}

step_checks() {
  local bg
  (
    timeout "$(bounded 30)" python3 "$ROOT/benchmarks/reproduce/reproduce.py" --profile gpu \
      --phases accuracy --bin "$ADAQP_BIN" --shared "$ADAQP_SHARED_DATASETS" --resume \
      --timeout 120 --out "$work/accuracy" >"$OUT/accuracy.txt" 2>&1
    accuracy=$?
    echo "gpu_session: accuracy exit $accuracy" >>"$OUT/accuracy.txt"
    [[ -f "$work/accuracy/results.md" ]] && cat "$work/accuracy/results.md" >>"$OUT/accuracy.txt"
    pack accuracy "$work/accuracy"
    timeout "$(bounded 30)" env DATASETS="cora coauthor-physics" SEEDS=3 \
      bash "$ROOT/benchmarks/precision/run.sh" "$work/precision" >"$OUT/precision.txt" 2>&1
    precision=$?
    echo "gpu_session: precision exit $precision" >>"$OUT/precision.txt"
    pack precision "$work/precision"
    ((accuracy == 0 && precision == 0))
  ) &
  bg=$!
  products_graph &
  local graph=$!
  rm -rf "$work/checks"
  mkdir -p "$work/checks"
  # A hung step must leave time for the rest: each NCCL step and training run is bounded.
  OUT="$work/checks" ADAQP_NCCL_TIMEOUT=${ADAQP_NCCL_TIMEOUT:-90} \
    ADAQP_RUN_TIMEOUT=${ADAQP_RUN_TIMEOUT:-90} timeout "$(bounded 60)" \
    bash "$ROOT/scripts/gpu_checks.sh" kernels nccl train 2>&1 | tee "$OUT/checks.txt"
  ((PIPESTATUS[0] == 0)) || status=1
  python3 "$ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- scripts/gpu_checks.sh \
    kernels nccl train >"$work/checks/provenance.json"
  pack checks "$work/checks"
  wait "$bg" || status=1  # accuracy or precision failed, or was cut
  wait "$graph"
}

step_pyg() {
  [[ -d "$work/pyg/$graph_name-p1" ]] || products_graph
  timeout "$(bounded 20)" env MODELS="${MODELS:-gcn}" ROUNDS="${ROUNDS:-3}" WARMUP=2 \
    EPOCHS=5 THREADS=16 WORKERS=1 bash "$ROOT/benchmarks/pyg_compare/run.sh" "$work/pyg" >"$OUT/pyg.txt" 2>&1 ||
    status=1
  # A cut run still leaves its finished rounds: summarise them.
  [[ -f "$work/pyg/summary.md" ]] ||
    python3 "$ROOT/benchmarks/pyg_compare/summarise.py" "$work/pyg/runs.jsonl" "$work/pyg" \
      >>"$OUT/pyg.txt" 2>&1
  pack pyg "$work/pyg"
}

step_scale() {
  mkdir -p "$work/scale"
  # The same graph and one-part partition as the pyg step.
  for d in "$graph_name" "$graph_name-p1"; do
    [[ -e "$work/scale/$d" || ! -d "$work/pyg/$d" ]] || ln -s "$work/pyg/$d" "$work/scale/$d"
  done
  timeout "$(bounded 20)" env EPOCHS=3 THREADS=16 PYG_NODES=0 \
    bash "$ROOT/benchmarks/scale/run.sh" "$work/scale" >"$OUT/scale.txt" 2>&1 || status=1
  pack scale "$work/scale"
}

step_profile() {
  timeout "$(bounded 20)" python3 "$ROOT/benchmarks/reproduce/reproduce.py" --profile gpu \
    --phases throughput --bin "$ADAQP_BIN" --shared "$ADAQP_SHARED_DATASETS" --resume \
    --timeout 240 --out "$work/profile" >"$OUT/profile.txt" 2>&1 || status=1
  cat "$work/profile/results.md" >>"$OUT/profile.txt" 2>/dev/null
  pack profile "$work/profile"
}

step_links() {
  mkdir -p "$work/links"
  # The device codec alone first, on the idle GPU: the exchanges' row widths here (256 and 47).
  for dim in 256 47; do
    timeout "$(bounded 20)" "$B/benchmarks/bench_quant" --devices cuda --dim "$dim" \
      --rows 1048576 || status=1
  done >"$work/links/codec.jsonl" 2>&1
  grep '^#' "$work/links/codec.jsonl" >"$OUT/links.txt"
  timeout "$(bounded 20)" env RATES=gpu NODES=1000000 AVG_DEGREE=50 FEAT=100 CLASSES=47 \
    HIDDEN=256 WORKERS="${WORKERS:-2 4}" MODELS="${MODELS:-gcn}" \
    MODES="${MODES:-vanilla adaqp adaqp-inline}" ROUNDS="${ROUNDS:-3}" EPOCHS=7 WARMUP=2 \
    bash "$ROOT/benchmarks/links/run.sh" "$work/links" \
    >>"$OUT/links.txt" 2>&1 || status=1
  # A cut run still leaves its finished rounds: summarise them.
  [[ -f "$work/links/summary.md" ]] ||
    python3 "$ROOT/benchmarks/links/summarise.py" "$work/links/runs.jsonl" "$work/links" \
      >>"$OUT/links.txt" 2>&1
  pack links "$work/links"
}

for s in "$@"; do
  if (($(left) < 60)); then
    echo "gpu_session: $(left) s left, too little for '$s'"
    status=1
    continue
  fi
  echo "gpu_session: $s ($(left) s left)"
  "step_$s"
done
exit "$status"
