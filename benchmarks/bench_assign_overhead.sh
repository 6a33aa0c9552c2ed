#!/usr/bin/env bash
# The adaptive bit-width scheme's costs and its time model (docs/design.md, section 6), from the
# per-epoch, per-rank records of `adaqp train` (mode adaqp, scheme adaptive) on a generated graph:
#
#   overhead: W workers (plain mpirun, shared memory): the share of the epoch spent assigning the
#             widths (assign_time_s / epoch_time_s, this rank's own; worst rank, mean over epochs
#             2..EPOCHS). Goal: below 2%.
#   model:    W workers on a rate-limited virtual cluster (scripts/vcluster.sh, BANDWIDTH per host
#             link each way): every exchange's modelled time (predicted_comm_time_by_layer, from the
#             start-up link probe and the widths in force) against its measured duration
#             (exchange_time_by_layer, largest over the ranks: from the moment the last rank
#             started the exchange, on clocks aligned at start-up, until the last rank's transfers
#             had completed and were unpacked); the median relative error |modelled - measured| /
#             measured over the exchanges of epochs 2..EPOCHS. Goal: below 20%. Also reported: the
#             same against each rank's own wall time from its own start (comm_time_by_layer, which
#             also holds its wait for late peers; slowest and fastest rank). Runs mode quant (no
#             overlap: the exchange runs alone) and adaqp.
#
# Usage: benchmarks/bench_assign_overhead.sh [overhead|model|all]   (default all)
# Environment (defaults in brackets): ADAQP_BUILD_DIR [build], NODES [100000], MODEL_NODES
# [50000], DEGREE [20, mean in-degree], FEAT [128], HIDDEN [256], LAYERS [3], EPOCHS [4],
# WORKERS [4], BANDWIDTH [100mbit], LAMBDA [0.5], THREADS [1], OUT [a temporary directory].
# Output: one JSON line per measurement, then a human-readable line (stderr).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/adaqp.sh"
what=${1:-all}
NODES=${NODES:-100000}
MODEL_NODES=${MODEL_NODES:-50000}
DEGREE=${DEGREE:-20}
FEAT=${FEAT:-128}
HIDDEN=${HIDDEN:-256}
LAYERS=${LAYERS:-3}
EPOCHS=${EPOCHS:-4}
WORKERS=${WORKERS:-4}
BANDWIDTH=${BANDWIDTH:-100mbit}
LAMBDA=${LAMBDA:-0.5}
THREADS=${THREADS:-1}
case $what in overhead | model | all) ;; *)
  echo "usage: $0 [overhead|model|all]" >&2
  exit 2
  ;;
esac
bench_setup

# job_args NODES: the job of every run (mode adaqp is set per run). The paper's objective and a
# solve at every epoch: over shared memory the default would send full precision and not solve.
job_args() {
  gcn_job_args "$1" "$WORKERS"
  set_pairs output.log_level=info communication.scheme=adaptive "communication.lambda=$LAMBDA" \
    communication.objective=normalized communication.resolve_drift=0
}

if [[ $what == overhead || $what == all ]]; then
  mapfile -t job < <(job_args "$NODES")
  mpirun --oversubscribe --bind-to none -np "$WORKERS" "$ADAQP_BIN" train "${job[@]}" \
    --set communication.mode=adaqp --set "output.dir=$OUT/overhead" >"$OUT/overhead.log" 2>&1 ||
    { cat "$OUT/overhead.log" >&2; exit 1; }
  python3 - "$OUT/overhead" "$WORKERS" "$NODES" <<'PY'
import json, sys
d, w, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [json.loads(l) for l in open(d + "/metrics.jsonl")]
epochs = [r for r in rows if "epoch" in r]
use = sorted({r["epoch"] for r in epochs})[1:]
share = {}
for r in epochs:
    if r["epoch"] in use:
        share.setdefault(r["rank"], []).append(r["assign_time_s"] / r["epoch_time_s"])
worst = max(sum(v) / len(v) for v in share.values())
assign = max(r["assign_time_s"] for r in epochs if r["epoch"] in use)
epoch = sum(max(r["epoch_time_s"] for r in epochs if r["epoch"] == e) for e in use) / len(use)
messages = sum(sum(sum(h) for h in r["bits_hist"]["fwd"] + r["bits_hist"]["bwd"])
               for r in epochs if r["epoch"] == use[-1])
print(json.dumps({"bench": "assign", "kind": "overhead", "workers": w, "nodes": nodes,
                  "messages_per_epoch": messages, "assign_share": worst,
                  "max_assign_time_s": assign, "epoch_time_s": epoch}))
print(f"# overhead W={w}, {nodes} nodes: {messages} messages per epoch, assignment takes "
      f"{100 * worst:.2f}% of the epoch (worst rank, mean; at most {assign * 1e3:.1f} ms of "
      f"{epoch:.2f} s)", file=sys.stderr)
PY
fi

if [[ $what == model || $what == all ]]; then
  mapfile -t job < <(job_args "$MODEL_NODES")
  # Partition outside the shaped cluster (rank 0 alone; nothing crosses the links).
  mpirun --oversubscribe --bind-to none -np "$WORKERS" "$ADAQP_BIN" train "${job[@]}" \
    --set communication.mode=adaqp --set training.epochs=1 --set "output.dir=$OUT/model-prep" \
    >"$OUT/model-prep.log" 2>&1 || { cat "$OUT/model-prep.log" >&2; die "partitioning run failed"; }
  for m in quant adaqp; do
    "$ADAQP_ROOT/scripts/vcluster.sh" --hosts "$WORKERS" --bandwidth "$BANDWIDTH" --timeout 1200 -- \
      "$ADAQP_BIN" train "${job[@]}" --set "communication.mode=$m" \
      --set "output.dir=$OUT/model-$m" >"$OUT/model-$m.log" 2>&1 ||
      { cat "$OUT/model-$m.log" >&2; exit 1; }
    python3 - "$OUT/model-$m" "$m" "$WORKERS" "$BANDWIDTH" <<'PY'
import json, statistics, sys
d, mode, w, bw = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [json.loads(l) for l in open(d + "/metrics.jsonl")]
link = [r for r in rows if r.get("event") == "link_model"][0]
epochs = [r for r in rows if "epoch" in r]
errs, errs_max, errs_min, pairs = [], [], [], []
for e in sorted({r["epoch"] for r in epochs})[1:]:
    recs = [r for r in epochs if r["epoch"] == e]
    for dirn in ("fwd", "bwd"):
        for l, pred in enumerate(recs[0]["predicted_comm_time_by_layer"][dirn]):
            if pred <= 0:
                continue
            dur = max(r["exchange_time_by_layer"][dirn][l] for r in recs)
            wall = [r["comm_time_by_layer"][dirn][l] for r in recs]
            errs.append(abs(pred - dur) / dur)
            errs_max.append(abs(pred - max(wall)) / max(wall))
            errs_min.append(abs(pred - min(wall)) / min(wall))
            pairs.append((e, dirn, l, round(pred, 4), round(dur, 4), round(min(wall), 4),
                          round(max(wall), 4)))
out = {"bench": "assign", "kind": "model", "mode": mode, "workers": w, "bandwidth": bw,
       "median_rel_error": statistics.median(errs),
       "median_rel_error_vs_slowest_wall": statistics.median(errs_max),
       "median_rel_error_vs_fastest_wall": statistics.median(errs_min), "exchanges": len(pairs),
       "probe_time_s": link["probe_time_s"],
       "fits": [{k: s[k] for k in ("sender", "alpha_s", "beta_s_per_byte", "r2", "samples")}
                for s in link["senders"]]}
print(json.dumps(out))
print(f"# model {mode} W={w} @{bw}: median |modelled - measured| / measured = "
      f"{100 * out['median_rel_error']:.1f}% over {len(pairs)} exchanges (vs each rank's own wall "
      f"time: {100 * out['median_rel_error_vs_slowest_wall']:.1f}% slowest, "
      f"{100 * out['median_rel_error_vs_fastest_wall']:.1f}% fastest); (epoch, dir, layer, "
      f"modelled, measured, fastest wall, slowest wall): {pairs}; fits "
      f"{[(s['sender'], round(1e-6 / s['beta_s_per_byte'], 2), round(s['r2'], 3)) for s in link['senders']]}"
      f" (MB/s, R^2)", file=sys.stderr)
PY
  done
fi
