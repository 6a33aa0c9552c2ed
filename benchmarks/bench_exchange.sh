#!/usr/bin/env bash
# Halo exchange benchmarks of `adaqp train` (docs/design.md, sections 4, 5 and 7), on a generated
# graph, reading the per-epoch, per-rank records of metrics.jsonl:
#
#   volume:  W workers (plain mpirun, shared memory), modes vanilla and quant at uniform 8, 4 and
#            2 bits: bytes sent per epoch (all ranks), epoch time, communication and quantization
#            time, and the final loss and test accuracy beside them (what quantization costs).
#   overlap: W = 2..WMAX workers on a rate-limited virtual cluster (scripts/vcluster.sh), modes
#            vanilla and overlap: communication time, exposed communication time and A_local time;
#            exposed_ratio = overlap's exposed time / vanilla's communication time.
#
# Usage: benchmarks/bench_exchange.sh [volume|overlap|all]   (default all)
# Environment (defaults in brackets): ADAQP_BUILD_DIR [build], NODES [200000], DEGREE [20, the
# mean in-degree: NODES*DEGREE directed edges], FEAT [128], HIDDEN [256], LAYERS [3],
# EPOCHS [4; the first is left out of the means], WORKERS [4], WMAX [4], BANDWIDTH [100mbit],
# OVERLAP_NODES [NODES], THREADS [1 compute thread per worker], OUT [a temporary directory].
# Output: one JSON line per measurement (times in seconds: means over epochs 2..EPOCHS of the
# slowest rank's value; bytes: all ranks, per epoch), then a human-readable line.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/adaqp.sh"
what=${1:-all}
NODES=${NODES:-200000}
DEGREE=${DEGREE:-20}
FEAT=${FEAT:-128}
HIDDEN=${HIDDEN:-256}
LAYERS=${LAYERS:-3}
EPOCHS=${EPOCHS:-4}
WORKERS=${WORKERS:-4}
WMAX=${WMAX:-4}
BANDWIDTH=${BANDWIDTH:-100mbit}
OVERLAP_NODES=${OVERLAP_NODES:-$NODES}
THREADS=${THREADS:-1}
case $what in volume | overlap | all) ;; *)
  echo "usage: $0 [volume|overlap|all]" >&2
  exit 2
  ;;
esac
bench_setup

# summarize DIR KIND LABEL W: one JSON line and one human line from DIR/metrics.jsonl.
summarize() {
  python3 - "$@" <<'PY'
import json, sys
d, kind, label, w = sys.argv[1:]
rows = [json.loads(l) for l in open(d + "/metrics.jsonl")]
summary = [r for r in rows if r.get("event") == "summary"][0]
epochs = sorted({r["epoch"] for r in rows if "epoch" in r and "event" not in r})
use = epochs[1:] or epochs
def slowest(key, e):
    return max(r[key] for r in rows if r.get("epoch") == e and "event" not in r)
def mean(key):
    return sum(slowest(key, e) for e in use) / len(use)
last = [r for r in rows if r.get("epoch") == epochs[-1] and "event" not in r]
out = {"bench": "exchange", "kind": kind, "mode": label, "workers": int(w),
       "epoch_time_s": mean("epoch_time_s"), "comm_time_s": mean("comm_time_s"),
       "exposed_comm_time_s": mean("exposed_comm_time_s"),
       "local_agg_time_s": mean("local_agg_time_s"), "quant_time_s": mean("quant_time_s"),
       "bytes_per_epoch": sum(r["bytes_sent"] for r in rows if r.get("epoch") == use[0]),
       "final_loss": last[0]["loss"], "final_test_acc": summary["final_test_acc"]}
print(json.dumps(out))
print(f"# {kind} W={w} {label}: epoch {out['epoch_time_s']:.3f} s, comm {out['comm_time_s']:.3f} s, "
      f"exposed {out['exposed_comm_time_s']:.3f} s, A_local {out['local_agg_time_s']:.3f} s, "
      f"quant {out['quant_time_s']:.3f} s, {out['bytes_per_epoch'] / 1e6:.2f} MB/epoch, "
      f"loss {out['final_loss']:.4f}, test acc {out['final_test_acc']:.4f}", file=sys.stderr)
PY
}

if [[ $what == volume || $what == all ]]; then
  mapfile -t job < <(gcn_job_args "$NODES" "$WORKERS")
  for m in vanilla quant8 quant4 quant2; do
    args=(--set communication.mode=vanilla)
    [[ $m == quant* ]] && args=(--set communication.mode=quant --set communication.scheme=uniform
      --set "communication.bits=${m#quant}")
    mpirun --oversubscribe --bind-to none -np "$WORKERS" "$ADAQP_BIN" train "${job[@]}" \
      --set "output.dir=$OUT/volume-$m" "${args[@]}" >"$OUT/volume-$m.log" 2>&1 ||
      { cat "$OUT/volume-$m.log" >&2; exit 1; }
    summarize "$OUT/volume-$m" volume "$m" "$WORKERS"
  done
fi

if [[ $what == overlap || $what == all ]]; then
  for ((w = 2; w <= WMAX; ++w)); do
    mapfile -t job < <(gcn_job_args "$OVERLAP_NODES" "$w")
    # Partition outside the shaped cluster (rank 0 alone; nothing crosses the links).
    mpirun --oversubscribe --bind-to none -np "$w" "$ADAQP_BIN" train "${job[@]}" \
      --set training.epochs=1 --set "output.dir=$OUT/overlap-prep-w$w" >/dev/null 2>&1
    for m in vanilla overlap; do
      "$ADAQP_ROOT/scripts/vcluster.sh" --hosts "$w" --bandwidth "$BANDWIDTH" --timeout 1200 -- \
        "$ADAQP_BIN" train "${job[@]}" --set "communication.mode=$m" \
        --set "output.dir=$OUT/overlap-$m-w$w" >"$OUT/overlap-$m-w$w.log" 2>&1 ||
        { cat "$OUT/overlap-$m-w$w.log" >&2; exit 1; }
      summarize "$OUT/overlap-$m-w$w" "overlap@$BANDWIDTH" "$m" "$w"
    done
    python3 - "$OUT/overlap-vanilla-w$w" "$OUT/overlap-overlap-w$w" "$w" <<'PY'
import json, sys
def mean(d, key):
    rows = [json.loads(l) for l in open(d + "/metrics.jsonl")]
    rows = [r for r in rows if "event" not in r]
    epochs = sorted({r["epoch"] for r in rows})[1:] or [1]
    return sum(max(r[key] for r in rows if r["epoch"] == e) for e in epochs) / len(epochs)
v, o, w = sys.argv[1:]
ratio = mean(o, "exposed_comm_time_s") / mean(v, "comm_time_s")
print(json.dumps({"bench": "exchange", "kind": "overlap_ratio", "workers": int(w),
                  "exposed_ratio": ratio,
                  "local_over_comm": mean(o, "local_agg_time_s") / mean(v, "comm_time_s")}))
print(f"# W={w}: overlap's exposed communication is {100 * ratio:.0f}% of vanilla's "
      f"communication time", file=sys.stderr)
PY
  done
fi
