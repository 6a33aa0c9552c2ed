#!/usr/bin/env bash
# Layer 0 over a sparse A X (training.sparse_features) against the dense A X, in one run on the
# same partition, cores and binary (benchmarks/results/README.md, "Sparse layer-0 input"): each
# dataset of DATASETS with its config and each model of MODELS (gat: 4 heads), W workers (mpirun
# --bind-to none, THREADS compute threads each), Vanilla, EPOCHS epochs, sparse and dense
# alternated REPEATS times. Per run: the
# mean epoch time over epochs 6..EPOCHS (rank 0), the largest peak RSS of a rank over the run and
# over its training phase (start-up, which holds X and the dense A X, excluded), the ranks that
# read A X sparse and the test accuracy at the best validation epoch.
# Usage: benchmarks/sparse_features/run.sh [OUT]   (OUT: a temporary directory by default)
# Environment [defaults]: ADAQP_BIN [build/src/adaqp], ADAQP_SHARED_DATASETS [../shared/datasets],
# DATASETS [cora citeseer coauthor-physics amazon-photo], MODELS [gcn], W [2], THREADS [1],
# EPOCHS [50], REPEATS [2].
# Output: results.csv in OUT and a table (medians over the repeats, dense / sparse ratios) on stdout.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
DATA=${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}
out=${1:-$(mktemp -d)}
mkdir -p "$out"
require_adaqp
W=${W:-2} THREADS=${THREADS:-1} EPOCHS=${EPOCHS:-50}
export OMP_NUM_THREADS=$THREADS

echo "dataset,model,features,repeat,epoch_s,peak_rss_mib,training_rss_mib,sparse_ranks,test_acc" \
  >"$out/results.csv"
for ds in ${DATASETS:-cora citeseer coauthor-physics amazon-photo}; do
  [[ -d "$DATA/$ds" ]] || { echo "sparse_features: dataset $ds missing in $DATA" >&2; exit 1; }
  # Partitioned first, so that no run's peak is the partitioner's.
  [[ -d "$out/part-$ds" ]] || "$ADAQP_BIN" partition --config "$ADAQP_ROOT/configs/$ds.yaml" \
    --set "dataset.path=$DATA/$ds" --set "partition.parts=$W" --set output.log_level=warn \
    --out "$out/part-$ds" >"$out/part-$ds.log" 2>&1 || { cat "$out/part-$ds.log" >&2; exit 1; }
  for model in ${MODELS:-gcn}; do
    model_args=(--set "model.type=$model")
    [[ $model == gat ]] && model_args+=(--set model.heads=4)
    for ((r = 1; r <= ${REPEATS:-2}; r++)); do
      for features in sparse dense; do
        run="$out/$ds-$model-$features-$r"
        echo "sparse_features: $ds $model $features, repeat $r" >&2
        mpirun --bind-to none -np "$W" "$ADAQP_BIN" train --config "$ADAQP_ROOT/configs/$ds.yaml" \
          --set "dataset.path=$DATA/$ds" --set "partition.parts=$W" \
          --set "partition.dir=$out/part-$ds" --set "output.dir=$run" \
          --set "training.epochs=$EPOCHS" --set "training.threads=$THREADS" \
          --set training.device=cpu --set communication.mode=vanilla "${model_args[@]}" \
          --set "training.sparse_features=$([[ $features == sparse ]] && echo true || echo false)" \
          --set output.log_level=warn >"$run.log" 2>&1 || { cat "$run.log" >&2; exit 1; }
        python3 - "$run/metrics.jsonl" "$ds,$model,$features,$r" >>"$out/results.csv" <<'PY'
import json, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
epochs = [r["epoch_time_s"] for r in recs
          if "epoch" in r and "event" not in r and r["rank"] == 0 and r["epoch"] > 5]
s = [r for r in recs if r.get("event") == "summary"][-1]
mem = s["memory"]
rss = max(max(rank) for rank in mem["peak_rss_bytes"]) / 2**20
training = max(rank[mem["phases"].index("training")] for rank in mem["peak_rss_bytes"]) / 2**20
print(f"{sys.argv[2]},{statistics.mean(epochs):.5f},{rss:.0f},{training:.0f},"
      f"{s['sparse_features_ranks']},{100 * s['test_acc_at_best_val']:.1f}")
PY
      done
    done
  done
done

python3 - "$out/results.csv" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| dataset | model | sparse on | epoch dense (ms) | epoch sparse (ms) | speed-up | peak RSS dense / sparse (MiB) | training RSS dense / sparse (MiB) | test acc dense / sparse |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for ds, model in dict.fromkeys((r["dataset"], r["model"]) for r in rows):
    m = {f: [r for r in rows if r["dataset"] == ds and r["model"] == model and r["features"] == f]
         for f in ("dense", "sparse")}
    t = {f: 1000 * st.median(float(r["epoch_s"]) for r in m[f]) for f in m}
    rss = {f: st.median(float(r["peak_rss_mib"]) for r in m[f]) for f in m}
    train = {f: st.median(float(r["training_rss_mib"]) for r in m[f]) for f in m}
    print(f"| {ds} | {model} | {m['sparse'][0]['sparse_ranks']} ranks | {t['dense']:.1f} | {t['sparse']:.1f} | "
          f"{t['dense'] / t['sparse']:.2f}x | {rss['dense']:.0f} / {rss['sparse']:.0f} | "
          f"{train['dense']:.0f} / {train['sparse']:.0f} | "
          f"{m['dense'][0]['test_acc']} / {m['sparse'][0]['test_acc']} |")
PY
