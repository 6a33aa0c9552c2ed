#!/usr/bin/env bash
# Start-up of `adaqp train` on a large generated graph: serial METIS (rank 0 loads the whole graph
# and partitions it; the others wait, then read their parts) against PT-Scotch (every rank reads a
# slice of the NumPy layout, the ranks partition together and each builds its own part;
# partition/partition_in_slices.h), on the whole graph and on its samples of each degree k in
# SAMPLES (partition.sample_degree).
#
#   startup:   the generated graph (NODES nodes, DEGREE in-edges per node, FEAT features) written
#              once in the NumPy layout; for each of metis at W=1,2,4, ptscotch at W=2,4 and
#              ptscotch with partition.sample_degree=k (method "sampled-k") at W=2,4, one
#              `adaqp train` of one epoch (GCN, 2 layers, hidden 16, Vanilla) under mpirun
#              --bind-to none: per rank, the wall time of the phases before training (partition,
#              load, startup; summary seconds_by_phase) and the peak resident memory of those
#              phases (summary memory.peak_rss_bytes), plus the edge cut (meta.yaml).
#   accuracy:  Cora and CiteSeer (../shared/datasets, the datasets' configs), metis against
#              ptscotch and sampled-k (the first k of SAMPLES) at W=ACC_W, SEEDS seeds each:
#              test accuracy at the best validation epoch.
#
# Usage: benchmarks/startup/run.sh [startup|accuracy|all]   (default all)
# Environment [defaults]: ADAQP_BUILD_DIR [build], ADAQP_SHARED_DATASETS [../shared/datasets],
# NODES [1000000], DEGREE [50], FEAT [64], SAMPLES ["16 12"], ACC_W [4], SEEDS [3], THREADS [1], OUT [a temporary
# directory]. Output: startup.csv and accuracy.csv in OUT and tables on stdout.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
DATA=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
what=${1:-all}
NODES=${NODES:-1000000}
DEGREE=${DEGREE:-50}
FEAT=${FEAT:-64}
SAMPLES=${SAMPLES:-16 12}
read -r -a samples <<<"$SAMPLES"

# The --set flags of a method: metis, ptscotch or sampled-k.
method_flags() {
  case $1 in
    sampled-*) echo "--set partition.method=ptscotch --set partition.sample_degree=${1#sampled-}" ;;
    *) echo "--set partition.method=$1" ;;
  esac
}
ACC_W=${ACC_W:-4}
SEEDS=${SEEDS:-3}
THREADS=${THREADS:-1}
case $what in startup | accuracy | all) ;; *)
  echo "usage: $0 [startup|accuracy|all]" >&2
  exit 2
  ;;
esac
bench_setup

# The summary record of a run's metrics.jsonl, reduced to one CSV line (see the header).
summarize() {  # summarize METHOD W DIR PARTITION_DIR
  python3 - "$@" <<'PY'
import json, sys
method, w, d, part = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = [json.loads(l) for l in open(d + "/metrics.jsonl")][-1]
assert s.get("event") == "summary", s
secs = s["seconds_by_phase"]            # per rank: partition, load, startup, training
rss = s["memory"]["peak_rss_bytes"]     # per rank, same phases
startup = [sum(r[:3]) for r in secs]
peaks = [max(r[:3]) for r in rss]
cut = next(int(l.split(":")[1]) for l in open(part + "/meta.yaml") if l.startswith("edge_cut:"))
edges = next(int(l.split(":")[1]) for l in open(part + "/meta.yaml") if l.startswith("num_edges:"))
gib = 2.0 ** 30
print(f"{method},{w},{max(startup):.2f},{max(r[0] for r in secs):.2f},{max(r[1] for r in secs):.2f},"
      f"{max(r[2] for r in secs):.2f},{peaks[0] / gib:.3f},{max(peaks[1:] or [0]) / gib:.3f},"
      f"{max(peaks) / gib:.3f},{cut},{edges}")
PY
}

run_startup() {
  local data="$OUT/graph-$NODES-$DEGREE"
  if [[ ! -d $data ]]; then
    echo "generating $NODES nodes, $DEGREE in-edges per node, $FEAT features into $data" >&2
    local t0=$SECONDS
    local graph
    mapfile -t graph < <(synthetic_graph "$NODES" "avg_degree=$DEGREE" "feat_dim=$FEAT" seed=1)
    "$ADAQP_BIN" generate "${graph[@]}" -o "$data" >/dev/null
    echo "generated in $((SECONDS - t0)) s ($(du -sh "$data" | cut -f1))" >&2
  fi
  local csv="$OUT/startup.csv"
  echo "method,W,startup_s,partition_s,load_s,build_s,rank0_peak_gib,other_peak_gib,max_peak_gib,edge_cut,edges" >"$csv"
  local spec method w
  local specs=(metis:1 metis:2 metis:4 ptscotch:2 ptscotch:4) k
  for k in "${samples[@]}"; do specs+=("sampled-$k:2" "sampled-$k:4"); done
  for spec in "${specs[@]}"; do
    method=${spec%:*}
    w=${spec#*:}
    local flags
    read -r -a flags <<<"$(method_flags "$method")"
    local dir="$OUT/run-$method-$w"
    rm -rf "$dir"
    echo "$method at W=$w ..." >&2
    local t0=$SECONDS
    mpirun --oversubscribe --bind-to none -np "$w" "$ADAQP_BIN" train --set "dataset.path=$data" \
      "${flags[@]}" --set "partition.parts=$w" \
      --set "partition.dir=$dir/partition" --set "output.dir=$dir" --set training.epochs=1 \
      --set model.layers=2 --set model.hidden=16 --set communication.mode=vanilla \
      --set "training.threads=$THREADS" --set training.device=cpu \
      --set communication.timeout_s=3600 >"$dir.log" 2>&1 ||
      { tail -n 30 "$dir.log" >&2; echo "error: $method at W=$w failed" >&2; exit 1; }
    echo "  done in $((SECONDS - t0)) s" >&2
    summarize "$method" "$w" "$dir" "$dir/partition" >>"$csv"
  done
  python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| method | W | start-up (s) | partition | load | build | rank 0 peak (GiB) | other ranks' peak | edge cut |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['method']} | {r['W']} | {r['startup_s']} | {r['partition_s']} | {r['load_s']} | "
          f"{r['build_s']} | {r['rank0_peak_gib']} | {r['other_peak_gib']} | {int(r['edge_cut']):,} "
          f"({100 * int(r['edge_cut']) / int(r['edges']):.1f}%) |")
by = {(r["method"], r["W"]): r for r in rows}
for method in dict.fromkeys(r["method"] for r in rows if r["method"] != "metis"):
    for w in ("2", "4"):
        m, p = by[("metis", w)], by[(method, w)]
        print(f"W={w}: {method}'s largest rank peak / metis's rank-0 peak = "
              f"{float(p['max_peak_gib']) / float(m['rank0_peak_gib']):.2f}; edge cut {method} / metis = "
              f"{int(p['edge_cut']) / int(m['edge_cut']):.3f}; start-up time {method} / metis = "
              f"{float(p['startup_s']) / float(m['startup_s']):.2f}")
PY
}

run_accuracy() {
  local csv="$OUT/accuracy.csv"
  echo "dataset,method,seed,test_at_best_val" >"$csv"
  local ds method seed
  for ds in cora citeseer; do
    for method in metis ptscotch "sampled-${samples[0]}"; do
      local flags
      read -r -a flags <<<"$(method_flags "$method")"
      for ((seed = 0; seed < SEEDS; ++seed)); do
        local dir="$OUT/acc-$ds-$method-$seed"
        rm -rf "$dir"
        mpirun --oversubscribe --bind-to none -np "$ACC_W" "$ADAQP_BIN" train \
          --config "$ADAQP_ROOT/configs/$ds.yaml" --set "dataset.path=$DATA/$ds" "${flags[@]}" \
          --set "partition.parts=$ACC_W" --set "partition.dir=$OUT/acc-part-$ds-$method" \
          --set "output.dir=$dir" --set "training.seed=$seed" --set training.threads=1 \
          --set training.device=cpu --set output.log_level=warn >"$dir.log" 2>&1 ||
          { tail -n 20 "$dir.log" >&2; echo "error: $ds $method seed $seed" >&2; exit 1; }
        python3 -c "import json,sys; s=[json.loads(l) for l in open(sys.argv[1])][-1]; \
print(f\"$ds,$method,$seed,{s['test_acc_at_best_val']:.4f}\")" "$dir/metrics.jsonl" >>"$csv"
      done
    done
  done
  python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
methods = tuple(dict.fromkeys(r["method"] for r in rows))
print("| dataset | metis test (mean ± sd) | " + " | ".join(f"{m} | difference" for m in methods[1:]) + " |")
print("|---" * (2 * len(methods)) + "|")
for ds in ("cora", "citeseer"):
    acc = {m: [float(r["test_at_best_val"]) for r in rows if r["dataset"] == ds and r["method"] == m]
           for m in methods}
    mean = {m: statistics.mean(v) for m, v in acc.items()}
    sd = {m: statistics.stdev(v) if len(v) > 1 else 0.0 for m, v in acc.items()}
    cells = [f"{100 * mean['metis']:.2f} ± {100 * sd['metis']:.2f}"]
    for m in methods[1:]:
        cells += [f"{100 * mean[m]:.2f} ± {100 * sd[m]:.2f}", f"{100 * (mean[m] - mean['metis']):+.2f}"]
    print(f"| {ds} | " + " | ".join(cells) + " |")
PY
}

case $what in
  startup) run_startup ;;
  accuracy) run_accuracy ;;
  all)
    run_startup
    run_accuracy
    ;;
esac
echo "CSV files in $OUT" >&2
