#!/usr/bin/env bash
# Does AdaQP ever lose to Vanilla? The four modes over a sweep of link rates, on the quick
# profile's generated graph (50k nodes, 20 in-edges each, 128 features, 8 classes; 3 layers,
# hidden 128), one rank per host of the virtual cluster (scripts/vcluster.sh) at each rate of
# RATES, plain mpirun over shared memory for `shm`, and for `gpu` every rank on the one GPU
# (training.device=cuda, a distinct NCCL_HOSTID each: NCCL over sockets, about 5-10 Gbit/s). Modes: vanilla, adaqp-q and adaqp (the
# default objective, seconds), adaqp-p, and adaqp-paper (mode adaqp with the paper's objective,
# communication.objective=normalized, solved every epoch: the adaptive scheme before full precision
# was a choice), adaqp-inline and adaqp-background (mode adaqp with communication.solve_schedule
# inline: the width solve before each epoch, on its critical path; background: beside the epoch).
# With RANKS_PER_HOST=K (default 1), each host of the virtual cluster runs K ranks (scripts/vcluster.sh
# --ranks-per-host: shared memory inside a host, the shaped link between hosts; W must be a multiple
# of K): links of two speeds. With BASELINE_BIN (an adaqp binary built from another commit, e.g. the
# one before a change), modes adaqp-baseline and vanilla-baseline run modes adaqp and vanilla with
# that binary, in the same rounds; the baseline's AdaQP is then set against the baseline's Vanilla.
# ROUNDS rounds (default 3); each runs every (rate, model, W, mode) once, the modes in reverse
# order on even rounds. A run's figure is the mean of the slowest rank's epoch over the epochs
# after WARMUP; a mode's is the median of its rounds, with their minimum and maximum; AdaQP /
# Vanilla is the ratio of those medians.
#
# Usage: benchmarks/links/run.sh [WORK_DIR]   (default runs/links; needs root for the namespaces)
# Environment: ADAQP_BIN (build/src/adaqp), RATES ("300mbit 1200mbit 4800mbit 10gbit shm": the
#   quick profile's calibrated rate at W=2, 4x and 16x it, 10 Gbit/s, shared memory), MODELS
#   ("gcn sage"), WORKERS (2), MODES, ROUNDS (3), EPOCHS (10), WARMUP (2), and the graph: NODES
#   (50000), AVG_DEGREE (20), FEAT (128), CLASSES (8), HIDDEN (128). On a GPU, the gpu profile's:
#   RATES=gpu NODES=1000000 AVG_DEGREE=50 FEAT=100 CLASSES=47 HIDDEN=256 WORKERS="2 4".
# Writes, as it goes: provenance.json, runs.jsonl (one line per run) and each run's folder; at the
# end summary.json, summary.md (the table, also printed) and adaqp_vs_vanilla.png.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
work_dir_arg "$@"
work=${1:-$ADAQP_ROOT/runs/links}
read -r -a rates <<<"${RATES:-300mbit 1200mbit 4800mbit 10gbit shm}"
read -r -a models <<<"${MODELS:-gcn sage}"
read -r -a workers <<<"${WORKERS:-2}"
read -r -a modes <<<"${MODES:-vanilla adaqp-q adaqp-p adaqp adaqp-paper}"
rounds=${ROUNDS:-3}
per_host=${RANKS_PER_HOST:-1}
baseline=${BASELINE_BIN:-}
epochs=${EPOCHS:-10}
warmup=${WARMUP:-2}
nodes=${NODES:-50000}
degree=${AVG_DEGREE:-20}
feat=${FEAT:-128}
classes=${CLASSES:-8}
hidden=${HIDDEN:-128}

mode_sets() {
  case $1 in
    vanilla | vanilla-baseline) echo communication.mode=vanilla ;;
    adaqp-q) echo communication.mode=quant ;;
    adaqp-p) echo communication.mode=overlap ;;
    adaqp | adaqp-baseline) echo communication.mode=adaqp ;;
    adaqp-inline) echo communication.mode=adaqp communication.solve_schedule=inline ;;
    adaqp-background) echo communication.mode=adaqp communication.solve_schedule=background ;;
    adaqp-paper)
      echo communication.mode=adaqp communication.objective=normalized communication.resolve_drift=0
      ;;
    *) die "unknown mode '$1'" ;;
  esac
}
for m in "${modes[@]}"; do mode_sets "$m" >/dev/null; done
[[ " ${modes[*]} " == *" vanilla "* ]] || die "MODES must include vanilla"
if [[ " ${modes[*]} " == *"-baseline "* && ! -x $baseline ]]; then
  die "modes adaqp-baseline and vanilla-baseline need BASELINE_BIN, an adaqp binary"
fi
# Every setting before the first run: a typo in the last rate would end the sweep midway.
for n in "rounds=$rounds" "epochs=$epochs" "warmup=$warmup" "ranks_per_host=$per_host" \
  "${workers[@]/#/W=}"; do
  [[ ${n#*=} =~ ^[0-9]+$ ]] || die "${n%%=*} '${n#*=}' is not a whole number"
done
((rounds >= 1 && per_host >= 1)) || die "ROUNDS and RANKS_PER_HOST must be at least 1"
((warmup < epochs)) || die "WARMUP ($warmup) leaves no measured epoch of EPOCHS ($epochs)"
for rate in "${rates[@]}"; do
  [[ $rate == shm || $rate == gpu || $rate =~ ^[0-9]+(\.[0-9]+)?([kmg]bit|bit)$ ]] ||
    die "rate '$rate' is none of shm, gpu or a tc rate such as 300mbit"
done
for w in "${workers[@]}"; do
  ((w % per_host == 0)) || die "W=$w is not a multiple of RANKS_PER_HOST=$per_host"
done
require_adaqp

mkdir -p "$work"
python3 "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$ADAQP_BIN" -- "$0" "$@" \
  >"$work/provenance.json"
if [[ -n $baseline ]]; then
  python3 "$ADAQP_ROOT/benchmarks/provenance.py" --bin "$baseline" -- "$0" "$@" \
    >"$work/provenance-baseline.json"
fi
graph="$work/graph-n$nodes-d$degree-f$feat-c$classes"
if [[ ! -d "$graph" ]]; then
  log "generating $nodes nodes"
  mapfile -t gen < <(synthetic_graph "$nodes" "avg_degree=$degree" "feat_dim=$feat" \
    "num_classes=$classes" seed=1)
  "$ADAQP_BIN" generate "${gen[@]}" --out "$graph" >/dev/null
fi
mapfile -t job < <(
  set_pairs dataset.format=numpy "dataset.path=$graph" dataset.self_loops=true
  gnn_model 3 "$hidden"
  set_pairs "training.epochs=$epochs" "training.eval_every=$epochs" output.log_level=warn)
for w in "${workers[@]}"; do
  [[ -d "$graph-p$w" ]] ||
    "$ADAQP_BIN" partition "${job[@]}" --set "partition.parts=$w" --out "$graph-p$w" >/dev/null
done
runs="$work/runs.jsonl"
: >"$runs"
rm -f "$work/summary.json" "$work/summary.md" "$work/adaqp_vs_vanilla.png"  # an earlier run's

# one ROUND RATE MODEL W MODE: a training run and its line in runs.jsonl.
one() {
  local round=$1 rate=$2 model=$3 w=$4 mode=$5
  local run="$work/r$round-$rate-$model-w$w-$mode" sets=()
  for s in $(mode_sets "$mode"); do sets+=(--set "$s"); done
  rm -rf "$run"
  local exe=$ADAQP_BIN
  [[ $mode == *-baseline ]] && exe=$baseline
  local cmd=("$exe" train "${job[@]}" --set "model.type=$model" --set "partition.parts=$w"
             --set "partition.dir=$graph-p$w" --set "output.dir=$run" "${sets[@]}")
  log "round $round: $rate $model W=$w $mode"
  if [[ $rate == gpu ]]; then
    # shellcheck disable=SC2016
    mpirun --oversubscribe --bind-to none -np "$w" bash -c \
      'NCCL_HOSTID=adaqp-links-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "${cmd[@]}" \
      --set training.device=cuda --set training.threads=0 >"$run.log" 2>&1
  elif [[ $rate == shm ]]; then
    mpirun --oversubscribe --bind-to none -np "$w" "${cmd[@]}" --set training.device=cpu \
      --set training.threads=1 >"$run.log" 2>&1
  else
    "$ADAQP_ROOT/scripts/vcluster.sh" --hosts "$((w / per_host))" --ranks-per-host "$per_host" \
      --bandwidth "$rate" --timeout 900 -- "${cmd[@]}" \
      --set training.device=cpu --set training.threads=1 >"$run.log" 2>&1
  fi || { tail -n 20 "$run.log" >&2; exit 1; }
  python3 - "$run" "$round" "$rate" "$model" "$w" "$mode" "$warmup" "$per_host" >>"$runs" <<'PY'
import json, statistics, sys
run, rnd, rate, model, w, mode, warmup, per_host = sys.argv[1:9]
recs = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
slowest, sent, quant, assign, full, same, same_full = {}, {}, {}, {}, {}, {}, {}
compute, setup = {}, {}  # the compute without the width scheme's share, the codecs' set-up
for r in recs:
    if r.get("event") or "epoch_time_s" not in r:
        continue
    e = r["epoch"]
    slowest[e] = max(slowest.get(e, 0.0), r["epoch_time_s"])
    sent[e] = sent.get(e, 0) + r["bytes_sent"]
    quant[e] = max(quant.get(e, 0.0), r["quant_time_s"])
    assign[e] = max(assign.get(e, 0.0), r.get("assign_time_s", 0.0))
    compute[e] = max(compute.get(e, 0.0), r["compute_time_s"] - r.get("assign_time_s", 0.0))
    setup[e] = max(setup.get(e, 0.0), r.get("codec_setup_time_s", 0.0))
    same[e] = same.get(e, 0) + r.get("bytes_same_host", 0)
    same_full[e] = same_full.get(e, 0) + r.get("bytes_same_host_full_precision", 0)
    hist = r.get("bits_hist")
    if hist:
        n = [sum(layer[k] for d in ("fwd", "bwd") for layer in hist[d]) for k in range(4)]
        full[e] = full.get(e, [0, 0, 0, 0])
        full[e] = [a + b for a, b in zip(full[e], n)]
measured = [e for e in sorted(slowest) if e > int(warmup)]
row = {"round": int(rnd), "rate": rate, "model": model, "workers": int(w), "mode": mode,
       "ranks_per_host": int(per_host),
       "epoch_times_s": [slowest[e] for e in sorted(slowest)],
       "epoch_s": statistics.fmean(slowest[e] for e in measured),
       "bytes_per_epoch": statistics.fmean(sent[e] for e in measured),
       "quant_s": statistics.fmean(quant[e] for e in measured),
       "assign_s": statistics.fmean(assign[e] for e in measured),
       "compute_s": statistics.fmean(compute[e] for e in measured),
       "codec_setup_s": statistics.fmean(setup[e] for e in measured),
       "same_host_bytes_per_epoch": statistics.fmean(same[e] for e in measured),
       "same_host_full_precision_bytes_per_epoch": statistics.fmean(same_full[e] for e in measured),
       "run_dir": run}
if full:
    total = [sum(full[e][k] for e in measured) for k in range(4)]
    row["width_shares"] = {b: n / max(1, sum(total)) for b, n in zip(("2", "4", "8", "32"), total)}
print(json.dumps(row))
PY
}

for ((r = 1; r <= rounds; r++)); do
  order=("${modes[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#modes[@]} - 1; i >= 0; i--)); do order+=("${modes[i]}"); done
  fi
  for rate in "${rates[@]}"; do
    for model in "${models[@]}"; do
      for w in "${workers[@]}"; do
        for mode in "${order[@]}"; do one "$r" "$rate" "$model" "$w" "$mode"; done
      done
    done
  done
done

python3 "$ADAQP_ROOT/benchmarks/links/summarise.py" "$runs" "$work"
