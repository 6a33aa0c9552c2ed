#!/usr/bin/env bash
# Part files with sparse features (CSR where under about half the values are non-zero) against
# dense ones: `adaqp partition` and a 3-epoch `adaqp train` of each shared dataset at W=1 and 2,
# BEFORE's binary and AFTER's alternated over ROUNDS rounds, each run's wall seconds and peak RSS
# (GNU time for partition; for train, each rank's seconds and peak RSS by phase from its
# metrics.jsonl summary: partition, load, startup, training) and the partition's bytes.
# Usage: run.sh BEFORE_BIN AFTER_BIN OUT_DIR   Environment: ROUNDS [3], DATASETS, ADAQP_SHARED_DATASETS.
set -euo pipefail
before=$1 after=$2 out=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
data=${ADAQP_SHARED_DATASETS:-$root/../shared/datasets}
read -r -a datasets <<<"${DATASETS:-cora citeseer amazon-photo coauthor-physics}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$out"
runs=$out/runs.jsonl
: >"$runs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq "${ROUNDS:-3}"); do
  for ds in "${datasets[@]}"; do
    for w in 1 2; do
      for side in before after; do
        bin=$before
        [[ $side == after ]] && bin=$after
        rm -rf "$work/part" "$work/out"
        job=(--config "$root/configs/$ds.yaml" --set "dataset.path=$data/$ds"
             --set "partition.parts=$w" --set "partition.dir=$work/part")
        /usr/bin/time -f "%e %M" -o "$work/time" "$bin" partition "${job[@]}" >/dev/null 2>&1
        read -r p_wall p_rss <"$work/time"
        bytes=$(du -sb "$work/part" | cut -f1)
        /usr/bin/time -f "%e" -o "$work/time" mpirun --oversubscribe --bind-to none -np "$w" \
          "$bin" train "${job[@]}" --set "output.dir=$work/out" --set training.epochs=3 \
          --set training.threads=1 >/dev/null 2>&1
        t_wall=$(cat "$work/time")
        python3 - "$work/out/metrics.jsonl" "$round" "$ds" "$w" "$side" "$p_wall" "$p_rss" \
          "$bytes" "$t_wall" >>"$runs" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
s = [r for r in recs if r.get("event") == "summary"][-1]
_, rnd, ds, w, side, p_wall, p_rss, nbytes, t_wall = sys.argv[1:]
print(json.dumps({"round": int(rnd), "dataset": ds, "workers": int(w), "side": side,
                  "partition_wall_s": float(p_wall), "partition_peak_rss_kib": int(p_rss),
                  "partition_bytes": int(nbytes), "train_wall_s": float(t_wall),
                  "seconds_by_phase": s["seconds_by_phase"],
                  "peak_rss_bytes_by_phase": s["memory"]["peak_rss_bytes"],
                  "final_loss": [r["loss"] for r in recs if "epoch_time_s" in r and "event" not in r][-1]}))
PY
        echo "round $round $ds W=$w $side: partition ${p_wall}s ${p_rss}KiB ${bytes}B, train ${t_wall}s" >&2
      done
    done
  done
done
