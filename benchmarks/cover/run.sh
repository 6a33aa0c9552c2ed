#!/usr/bin/env bash
# The cover layout against the rows layout (communication.exchange; docs/design.md, section 4):
#
#   rows:        METIS partitions at W workers (plain mpirun) of Cora, CiteSeer, Amazon Photo,
#                Coauthor Physics (../shared/datasets, the datasets' configs) and the default job's
#                generated graph; Vanilla for EPOCHS epochs in each layout: rows per exchange and
#                bytes per epoch (all ranks, from the summary record) and their ratio.
#   throughput:  Amazon Photo and Coauthor Physics on the virtual cluster (scripts/vcluster.sh,
#                one host per worker, PHOTO_RATE / PHYSICS_RATE per link) with the layer-0 feature
#                cache off (CACHE; the reference's volume: layer 0's input rows travel every epoch,
#                so the halo exchange, not the gradient all-reduce, dominates the epoch): Vanilla
#                and AdaQP in each layout; epoch time and bytes (means over epochs 2..EPOCHS,
#                slowest rank), Vanilla's share of the epoch spent waiting for exchanges, and the
#                cover/rows speed-up.
#
# Usage: benchmarks/cover/run.sh [rows|throughput|all]   (default all)
# Environment [defaults]: ADAQP_BUILD_DIR [build], ADAQP_SHARED_DATASETS [../shared/datasets],
# W [4], EPOCHS [5], PHOTO_RATE [100mbit], PHYSICS_RATE [1gbit], CACHE [false], THREADS [1 compute
# thread per worker], OUT [a temporary directory]. Output: CSV files rows.csv and throughput.csv in OUT and a table on stdout.
# Throughput needs root (network namespaces).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
DATA=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
what=${1:-all}
W=${W:-4}
EPOCHS=${EPOCHS:-5}
PHOTO_RATE=${PHOTO_RATE:-100mbit}
PHYSICS_RATE=${PHYSICS_RATE:-1gbit}
CACHE=${CACHE:-false}
THREADS=${THREADS:-1}
case $what in rows | throughput | all) ;; *)
  echo "usage: $0 [rows|throughput|all]" >&2
  exit 2
  ;;
esac
bench_setup

# job DATASET: the arguments of DATASET's job (generated: the default job's graph).
job() {
  local args=(--set "partition.parts=$W" --set partition.method=metis
    --set "partition.dir=$OUT/partition-$1" --set "training.epochs=$EPOCHS"
    --set "training.eval_every=$EPOCHS" --set "training.threads=$THREADS"
    --set training.device=cpu --set output.log_level=warn)
  [[ $1 == generated ]] ||
    args+=(--config "$ADAQP_ROOT/configs/$1.yaml" --set "dataset.path=$DATA/$1")
  echo "${args[@]}"
}

# summary DIR: "rows bytes_per_epoch epoch_time_s exposed_comm_s" (times: means over epochs
# 2..EPOCHS of the slowest rank's).
summary() {
  python3 - "$1" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl")]
s = [r for r in recs if r.get("event") == "summary"][0]
epochs = sorted({r["epoch"] for r in recs if "epoch" in r and "event" not in r})[1:]
def slowest(key):
    return sum(max(r[key] for r in recs if r.get("epoch") == e and "event" not in r)
               for e in epochs) / len(epochs)
print(s["rows_per_exchange"], round(s["bytes_per_epoch"]), slowest("epoch_time_s"),
      slowest("exposed_comm_time_s"))
PY
}

# train DATASET MODE LAYOUT [LAUNCHER...]: one run into $OUT/DATASET-MODE-LAYOUT, with the
# --set arguments of the array `extra` last.
extra=()
train() {
  local ds=$1 mode=$2 layout=$3 dir="$OUT/$1-$2-$3"
  shift 3
  # shellcheck disable=SC2046  # job prints words to split
  "$@" "$ADAQP_BIN" train $(job "$ds") --set "communication.mode=$mode" \
    --set "communication.exchange=$layout" --set "output.dir=$dir" "${extra[@]}" >"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; exit 1; }
}

if [[ $what == rows || $what == all ]]; then
  echo "dataset,layout,rows_per_exchange,bytes_per_epoch" >"$OUT/rows.csv"
  printf '%-18s %12s %12s %6s %14s %14s %6s\n' dataset "rows today" cover ratio "MB/ep rows" \
    "MB/ep cover" ratio
  for ds in cora citeseer amazon-photo coauthor-physics generated; do
    declare -A r=() b=()
    for layout in rows cover; do
      train "$ds" vanilla "$layout" mpirun --oversubscribe --bind-to none -np "$W"
      read -r rows bytes _ _ < <(summary "$OUT/$ds-vanilla-$layout")
      r[$layout]=$rows
      b[$layout]=$bytes
      echo "$ds,$layout,$rows,$bytes" >>"$OUT/rows.csv"
    done
    awk -v ds="$ds" -v r0="${r[rows]}" -v r1="${r[cover]}" -v b0="${b[rows]}" -v b1="${b[cover]}" \
      'BEGIN { printf "%-18s %12d %12d %6.3f %14.3f %14.3f %6.3f\n", ds, r0, r1, r1 / r0,
               b0 / 1e6, b1 / 1e6, b1 / b0 }'
  done
fi

if [[ $what == throughput || $what == all ]]; then
  echo "dataset,mode,layout,rate,epoch_time_s,exposed_comm_s,bytes_per_epoch" >"$OUT/throughput.csv"
  extra=(--set "communication.feature_cache=$CACHE")
  printf '%-18s %-8s %-8s %-6s %10s %10s %12s %8s\n' dataset rate mode layout "epoch s" \
    "wait share" "MB/epoch" "speed-up"
  for ds in amazon-photo coauthor-physics; do
    rate=$PHOTO_RATE
    [[ $ds == coauthor-physics ]] && rate=$PHYSICS_RATE
    for mode in vanilla adaqp; do
      declare -A t=()
      for layout in rows cover; do
        train "$ds" "$mode" "$layout" "$ADAQP_ROOT/scripts/vcluster.sh" --hosts "$W" \
          --bandwidth "$rate" --timeout 1200 --
        read -r _ bytes epoch exposed < <(summary "$OUT/$ds-$mode-$layout")
        t[$layout]=$epoch
        echo "$ds,$mode,$layout,$rate,$epoch,$exposed,$bytes" >>"$OUT/throughput.csv"
        awk -v ds="$ds" -v r="$rate" -v m="$mode" -v l="$layout" -v e="$epoch" -v x="$exposed" \
          -v b="$bytes" -v base="${t[rows]}" 'BEGIN {
            printf "%-18s %-8s %-8s %-6s %10.3f %10.2f %12.3f %8.2f\n", ds, r, m, l, e, x / e,
                   b / 1e6, base / e }'
      done
    done
  done
fi
echo "results: $OUT"
