#!/usr/bin/env bash
# Heterogeneous graphs as they stand (issue 41): the ogbn-mag-shaped generator at NODES nodes
# written in OGB's heterogeneous layout, that directory loaded whole, each model of MODELS trained
# at each W of WORKERS (reverse relations, Vanilla, one compute thread a rank; sage: GraphSAGE on
# the homogeneous view with per-type self-loops; rgcn: R-GCN over the rows layout, no self-loops,
# its root weight standing for them; rgcn-first: R-GCN over the relation_first layout), each run's
# epoch, largest training peak RSS, bytes sent per epoch and rows per exchange, and per partition
# the covers (adaqp info --covers: the cover per relation against the source rows, the
# one-adjacency cover, and the relation-first layout's cover against one row per destination).
#
# Usage: benchmarks/hetero/run.sh [WORK_DIR]   (default runs/hetero)
# Environment [defaults]: ADAQP_BIN or ADAQP_BUILD_DIR [build], NODES [1000000], CLASSES [16],
#   FEAT [128], AVG_DEGREE [10], WORKERS ["2 4"], MODELS ["sage rgcn rgcn-first"], EPOCHS [5],
#   CACHE [true] (communication.feature_cache: layer 0 over its cached aggregation of X), RATE
#   [""] (train on the virtual cluster, one rank per host, links of RATE, e.g. 1gbit: needs root;
#   empty: plain mpirun, shared memory).
# Writes WORK_DIR/results.jsonl (one line per step: seconds, peak KiB by GNU time where it runs the
# step, counts) and prints it.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
work=${1:-$ADAQP_ROOT/runs/hetero}
nodes=${NODES:-1000000}
read -r -a workers <<<"${WORKERS:-2 4}"
read -r -a models <<<"${MODELS:-sage rgcn rgcn-first}"
cache=${CACHE:-true}
epochs=${EPOCHS:-5}
require_adaqp
command -v /usr/bin/time >/dev/null || die "needs GNU time (/usr/bin/time; apt-get install time)"
mkdir -p "$work"
results=$work/results.jsonl
: >"$results"

mapfile -t gen < <(synthetic_graph "$nodes" "num_classes=${CLASSES:-16}" "feat_dim=${FEAT:-128}" \
  "avg_degree=${AVG_DEGREE:-10}" heterogeneous=true)
data=$work/mag-$nodes
# timed NAME COMMAND...: runs COMMAND under GNU time into NAME.log; sets seconds and kib.
timed() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" >"$work/$name.log" 2>&1 ||
    { tail -n 20 "$work/$name.log" >&2; die "$name failed"; }
  read -r seconds kib <"$work/$name.time"
}

rm -rf "$data"
log "generating $nodes nodes into $data"
timed generate "$ADAQP_BIN" generate "${gen[@]}" --out "$data"
printf '{"step": "generate", "nodes": %s, "seconds": %s, "peak_kib": %s}\n' "$nodes" "$seconds" \
  "$kib" >>"$results"
log "loading $data whole"
timed load "$ADAQP_BIN" info --dataset "$data" --json
printf '{"step": "load", "seconds": %s, "peak_kib": %s}\n' "$seconds" "$kib" >>"$results"

for model in "${models[@]}"; do
  type=${model%-first}
  exchange=rows
  [[ $model != *-first ]] || exchange=relation_first
  loops=true
  [[ $type != rgcn ]] || loops=false
  for w in "${workers[@]}"; do
    parts=$work/parts-w$w-loops-$loops
    run=$work/run-$model-w$w
    rm -rf "$run"
    [[ -d "$parts" ]] || "$ADAQP_BIN" partition --set "dataset.path=$data" \
      --set dataset.add_reverse=true --set "dataset.self_loops=$loops" --set "partition.parts=$w" \
      --out "$parts" >"$work/partition-w$w-loops-$loops.log" 2>&1 ||
      die "partitioning for W=$w failed"
    log "W=$w: $model"
    launch=(mpirun --oversubscribe --bind-to none -np "$w")
    [[ -z ${RATE:-} ]] ||
      launch=("$ADAQP_ROOT/scripts/vcluster.sh" --hosts "$w" --bandwidth "$RATE" --timeout 1800 --)
    timed "train-$model-w$w" "${launch[@]}" "$ADAQP_BIN" train \
      --set "dataset.path=$data" --set dataset.add_reverse=true --set "dataset.self_loops=$loops" \
      --set "model.type=$type" --set "communication.exchange=$exchange" \
      --set "communication.feature_cache=$cache" --set model.layers=2 --set model.hidden=128 \
      --set "training.epochs=$epochs" --set training.threads=1 --set communication.mode=vanilla \
      --set "partition.parts=$w" --set "partition.dir=$parts" --set "output.dir=$run"
    "$ADAQP_BIN" info --partition "$parts" --covers --json >"$parts.covers.json" 2>/dev/null
    python3 - "$run/metrics.jsonl" "$parts.covers.json" "$w" "$model" "$cache" "${RATE:-shm}" \
      >>"$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
summary = [r for r in rows if r.get("event") == "summary"][-1]
training = [per_rank[-1] for per_rank in summary["memory"]["peak_rss_bytes"]]  # the last phase
last = max(r["epoch"] for r in rows if r.get("event") != "summary")
sent = sum(r["bytes_sent"] for r in rows if r.get("event") != "summary" and r["epoch"] == last)
covers = json.load(open(sys.argv[2]))["boundary_covers"]
rows_now = covers["source_rows"]
print(json.dumps({
    "step": "train", "model": sys.argv[4], "workers": int(sys.argv[3]),
    "feature_cache": sys.argv[5] == "true", "link": sys.argv[6],
    "rows_per_exchange": summary["rows_per_exchange"],
    "epoch_s": summary["mean_epoch_time_s"], "bytes_per_epoch": sent,
    "time_breakdown_s": summary["time_breakdown_s"],
    "training_peak_rss_gib": max(training) / 2**30,
    "training_peak_rss_gib_per_rank": [t / 2**30 for t in training],
    "source_rows": rows_now,
    "cover_rows": covers["cover_sources"] + covers["cover_partials"],
    "relation_cover_rows": covers["relation_cover_sources"] + covers["relation_cover_partials"],
    "relation_cover_share": (covers["relation_cover_sources"] + covers["relation_cover_partials"])
    / max(rows_now, 1),
    "destinations": covers["destinations"],
    "first_cover_rows": covers["first_cover_sources"] + covers["first_cover_partials"]}))
PY
  done
done
cat "$results"
