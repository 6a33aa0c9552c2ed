#!/usr/bin/env bash
# Graph attention (model.type gat) on the shared datasets, two parts (benchmarks/results/README.md,
# "Graph attention"):
#   accuracy   Cora with the GAT paper's settings (8 heads of 8, dropout 0.6 on inputs and
#              attention weights, lr 0.005, 200 epochs), W=2 (METIS), Vanilla and AdaQP, seeds
#              1..SEEDS: test accuracy at the best validation epoch per run, mean and standard
#              deviation per mode.
#   overlap    THROUGHPUT_DATASET with 4 heads of 16, 30 epochs, W=2 on the virtual cluster
#              (scripts/vcluster.sh, needs root) at each link rate of RATES, the four modes
#              alternated REPEATS times: median epoch time, exposed communication and bytes per
#              epoch over epochs 6-30 (rank 0).
# Usage: benchmarks/gat/run.sh [accuracy|overlap|all] [OUT]   (default all; OUT: a temporary
# directory)
# Environment [defaults]: ADAQP_BIN [build/src/adaqp], ADAQP_SHARED_DATASETS [../shared/datasets],
# SEEDS [6], THROUGHPUT_DATASET [amazon-photo], RATES [200mbit 50mbit], REPEATS [2].
# Output: accuracy.csv and overlap.csv in OUT, and their summaries on stdout.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
DATA=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
what=${1:-all}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
export OMP_NUM_THREADS=1
require_adaqp

# train DATASET RUN_DIR ARGS...: one W=2 GAT run under the launcher in the array LAUNCH; ends the
# script on failure.
train() {
  local ds=$1 run=$2
  shift 2
  [[ -d "$DATA/$ds" ]] || { echo "gat: dataset $ds missing in $DATA" >&2; exit 1; }
  "${LAUNCH[@]}" "$ADAQP_BIN" train --config "$ADAQP_ROOT/configs/$ds.yaml" \
    --set "dataset.path=$DATA/$ds" --set partition.parts=2 --set "partition.dir=$out/part-$ds" \
    --set model.type=gat \
    --set training.threads=1 --set training.device=cpu --set output.log_level=warn \
    --set "output.dir=$run" "$@" >"$run.log" 2>&1 || { cat "$run.log" >&2; exit 1; }
}

accuracy() {
  echo "mode,seed,test_acc_at_best_val" >"$out/accuracy.csv"
  for ((s = 1; s <= ${SEEDS:-6}; s++)); do
    for mode in vanilla adaqp; do
      echo "gat accuracy: cora $mode seed $s" >&2
      LAUNCH=(mpirun --bind-to none -np 2)
      train cora "$out/acc-$mode-s$s" --set model.heads=8 --set model.hidden=64 \
        --set model.dropout=0.6 --set model.attention_dropout=0.6 --set training.lr=0.005 \
        --set "communication.mode=$mode" --set "training.seed=$s"
      python3 - "$out/acc-$mode-s$s/metrics.jsonl" "$mode" "$s" >>"$out/accuracy.csv" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
print(f"{sys.argv[2]},{sys.argv[3]},{100 * s['test_acc_at_best_val']:.1f}")
PY
    done
  done
  python3 - "$out/accuracy.csv" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for mode in ("vanilla", "adaqp"):
    a = [float(r["test_acc_at_best_val"]) for r in rows if r["mode"] == mode]
    print(f"cora gat {mode}: {st.mean(a):.1f} +- {st.pstdev(a):.1f} over {len(a)} seeds {a}")
PY
}

overlap() {
  local ds=${THROUGHPUT_DATASET:-amazon-photo}
  echo "rate,mode,repeat,epoch_ms,exposed_comm_ms,bytes_per_epoch" >"$out/overlap.csv"
  for rate in ${RATES:-200mbit 50mbit}; do
    for ((r = 1; r <= ${REPEATS:-2}; r++)); do
      for mode in vanilla overlap quant adaqp; do
        echo "gat overlap: $ds $rate $mode run $r" >&2
        local run="$out/ov-$rate-$mode-r$r"
        LAUNCH=("$ADAQP_ROOT/scripts/vcluster.sh" --hosts 2 --bandwidth "$rate" --)
        train "$ds" "$run" --set model.heads=4 --set model.hidden=64 --set training.epochs=30 \
          --set "communication.mode=$mode"
        python3 - "$run/metrics.jsonl" "$rate" "$mode" "$r" >>"$out/overlap.csv" <<'PY'
import json, statistics as st, sys
ep = [json.loads(l) for l in open(sys.argv[1])]
ep = [e for e in ep if "epoch" in e and "event" not in e and e["rank"] == 0][5:]
med = lambda k: st.median(e[k] for e in ep)
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{1000 * med('epoch_time_s'):.1f},"
      f"{1000 * med('exposed_comm_time_s'):.1f},{int(med('bytes_sent'))}")
PY
      done
    done
  done
  column -s, -t "$out/overlap.csv"
}

case $what in
  accuracy) accuracy ;;
  overlap) overlap ;;
  all) accuracy; overlap ;;
  *) echo "usage: $0 [accuracy|overlap|all] [OUT]" >&2; exit 2 ;;
esac
echo "gat: results in $out" >&2
