#!/usr/bin/env bash
# The whole epoch on the GPU (training.device=cuda, NCCL between ranks), against the CPU path, on a
# generated graph and on Cora (when the shared datasets are present), dropout on, same seed:
# - W=1: the CUDA run's per-epoch losses and final parameters equal the CPU run's within
#   DEVICE_TOL (tests/cli/lib/device_job.sh: they differ only in float summation order; the CPU
#   test device_tolerance.sh shows the margin of that tolerance on both sides);
# - W=2 and W=4 on the one GPU (a distinct NCCL_HOSTID per rank) reproduce CUDA W=1 the same way;
# - overlap (AdaQP-p) reproduces vanilla exactly on the GPU (same partition directory);
# - the cover layout (communication.exchange=cover: partial sums by cuSPARSE on the sender)
#   reproduces the rows layout at W=2 within 1e-4;
# - quantized modes (uniform 4 bits; random widths) send exactly the CPU's bytes per epoch, rank
#   and layer;
# - the cover layout with quantized messages (random widths) sends exactly the CPU's bytes too;
# - the adaptive scheme runs on the GPU and chooses several widths;
# - multi-label training (a GraphSAINT-layout graph, binary cross-entropy) matches the CPU at W=2
#   within DEVICE_TOL, and its predictions.npy (output.predictions) the CPU's at 99% of entries;
#   scored by ROC-AUC (training.metric: rocauc, the logits copied to the host), its scores the
#   CPU's within 1e-3;
# - a diverging quantized run (learning rate 1e30) stops non-zero at epoch 2 with the codec's error
#   naming the message from the first rank that meets it (on CUDA from settle(), which reads the
#   device codec's status word; the job is then aborted), as on the CPU;
# - GraphSAGE with LayerNorm, GAT with 4 heads, the layer-0 feature cache off, and R-GCN on the
#   generated ogbn-mag-shaped graph (learned rows for its featureless types, without dropout; and
#   over the relation-first layout) match the CPU at W=2 within DEVICE_TOL (on the CPU these differ
#   across W by 2.6e-7 and 4.6e-7);
# - training.patience and training.restore_best on CUDA (R-GCN, its learned rows on the device):
#   the model put back after the early stop has the parameters and predictions.npy of a CUDA run
#   trained up to the best epoch (within DEVICE_TOL, and at 99% of nodes);
# - training.device=auto takes the GPU and reproduces the CUDA run; every run's epoch records have
#   consistent times, and on CUDA each rank's device allocator peak stays flat after epoch 2;
# - checkpoints are device-independent: a CUDA run resumed on the CPU on 2 workers, and a CPU run
#   resumed on CUDA, reproduce the uninterrupted run.
# Skipped (exit 77) without a visible GPU.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU visible (nvidia-smi -L failed)"
  exit 77
fi
compare=("$PYTHON" "$ADAQP_SOURCE_DIR/tests/cli/lib/compare_runs.py")

# shellcheck source=tests/cli/lib/device_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/device_job.sh"

# run NAME DEVICE W ARGS...: trains on W ranks (each its own NCCL_HOSTID, so that they may share
# the GPU) into $tmp/NAME/DEVICE-wW; every run of one dataset and W reads one partition (Cora's,
# or the generated graph's).
run() {
  local name=$1 device=$2 w=$3 data=gen
  shift 3
  [[ $name == cora || $name == multi* || $name == rgcn* ]] && data=${name%-first}
  local out="$tmp/$name/$device-w$w"
  # shellcheck disable=SC2016
  if ! timeout "${ADAQP_RUN_TIMEOUT:-600}" mpirun --oversubscribe --bind-to none -np "$w" bash -c \
      'NCCL_HOSTID=adaqp-gpu-test-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$ADAQP_BIN" train \
      --set "training.device=$device" --set "partition.parts=$w" \
      --set "partition.dir=$tmp/$data-partition-w$w" --set "output.dir=$out" \
      "${device_training[@]}" "$@" --set output.log_level=warn >"$out.log" 2>&1; then
    cat "$out.log"
    echo "FAIL: $name on $device, $w ranks" >&2
    exit 1
  fi
}

synthetic=("${device_job[@]}")
cases=(gen)
mkdir -p "$tmp/gen" "$tmp/cora" "$tmp/quant" "$tmp/random" "$tmp/quantcover" "$tmp/multi" \
  "$tmp/overlap" "$tmp/adaptive" "$tmp/cover" "$tmp/sage" "$tmp/gat" "$tmp/nocache" "$tmp/auto" \
  "$tmp/rgcn" "$tmp/rgcn-first"
cora="${ADAQP_SHARED_DATASETS:-}/cora"
[[ -d "$cora/raw" ]] && cases+=(cora)
args_of() {
  if [[ $1 == cora ]]; then
    echo --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" --set "dataset.path=$cora" \
      --set communication.mode=vanilla
  else
    echo "${synthetic[@]}"
  fi
}

for name in "${cases[@]}"; do
  # shellcheck disable=SC2046
  run "$name" cpu 1 $(args_of "$name")
  for w in 1 2 4; do
    # shellcheck disable=SC2046
    run "$name" cuda "$w" $(args_of "$name")
  done
  "${compare[@]}" losses "$tmp/$name/cpu-w1" "$tmp/$name/cuda-w1" "$DEVICE_TOL" --params "$DEVICE_TOL"
  for w in 2 4; do
    "${compare[@]}" losses "$tmp/$name/cuda-w1" "$tmp/$name/cuda-w$w" "$DEVICE_TOL" \
      --params "$DEVICE_TOL"
  done
  "${compare[@]}" sanity "$tmp/$name/cpu-w1"
  for w in 1 2 4; do
    "${compare[@]}" sanity "$tmp/$name/cuda-w$w" --device
  done
done

# GraphSAGE with LayerNorm, GAT (4 heads, attention dropout), layer 0's input rows exchanged
# every epoch, R-GCN with learned featureless rows, and R-GCN over the relation-first layout with
# layer 0 cached: CPU against CUDA.
# R-GCN with learned rows runs without dropout: with it (H200, 2026-12-04) the CPU and CUDA runs
# part at Adam's first step on weights whose gradient nearly cancels (after one epoch at W=1 two of
# layer 0's 33,864 parameters differ by 1.5e-5, the rest by 1.5e-8; after 30 epochs at W=2 by
# 1.9e-3 to 7.5e-3 and the losses by up to 1.5e-3); without it they agree within 7.5e-7 in
# parameters and 2.4e-6 in losses. Its dropout on CUDA is checked by rgcn-first below and
# restore_best, CUDA against CUDA.
for device in cpu cuda; do
  run rgcn "$device" 2 "${synthetic[@]}" --set dataset.synthetic.heterogeneous=true \
    --set dataset.add_reverse=true --set model.type=rgcn --set model.featureless=embedding \
    --set communication.exchange=rows --set model.dropout=0
  run rgcn-first "$device" 2 "${synthetic[@]}" --set dataset.synthetic.heterogeneous=true \
    --set dataset.add_reverse=true --set model.type=rgcn \
    --set communication.exchange=relation_first
  run sage "$device" 2 "${synthetic[@]}" --set model.type=sage --set model.layer_norm=true
  run gat "$device" 2 "${synthetic[@]}" --set model.type=gat --set model.heads=4 \
    --set model.attention_dropout=0.5
  run nocache "$device" 2 "${synthetic[@]}" --set communication.feature_cache=false
done
# Every model is compared, and the checks below run, before a mismatch fails the test (at its
# end): a GPU session is short.
mismatched=()
for name in sage gat nocache rgcn rgcn-first; do
  "${compare[@]}" losses "$tmp/$name/cpu-w2" "$tmp/$name/cuda-w2" "$DEVICE_TOL" \
    --params "$DEVICE_TOL" || mismatched+=("$name")
  "${compare[@]}" sanity "$tmp/$name/cuda-w2" --device || mismatched+=("$name (sanity)")
done

# training.restore_best on CUDA: the best epoch's model, parameters and learned rows, put back.
best_run() {
  local out=$1
  shift
  # shellcheck disable=SC2016
  timeout "${ADAQP_RUN_TIMEOUT:-600}" mpirun --oversubscribe --bind-to none -np 2 bash -c \
    'NCCL_HOSTID=adaqp-gpu-test-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$ADAQP_BIN" train \
    "${synthetic[@]}" --set dataset.synthetic.heterogeneous=true --set dataset.add_reverse=true \
    --set model.type=rgcn --set model.featureless=embedding --set communication.exchange=rows \
    --set training.device=cuda --set partition.parts=2 --set "partition.dir=$tmp/rgcn-partition-w2" \
    --set training.seed=11 --set model.dropout=0.5 --set output.predictions=true \
    --set "output.dir=$out" --set output.log_level=warn "$@" >"$out.log" 2>&1 ||
    { cat "$out.log"; echo "FAIL: R-GCN on CUDA into $out" >&2; exit 1; }
}
best_run "$tmp/best" --set training.epochs=150 --set training.patience=10 \
  --set training.restore_best=true
read -r best_epoch last_epoch < <("$PYTHON" -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]
print(s["params_epoch"], s["epochs"])' "$tmp/best/metrics.jsonl")
((best_epoch < last_epoch)) ||
  { echo "FAIL: R-GCN's best epoch $best_epoch is its last: nothing to restore" >&2; exit 1; }
best_run "$tmp/at-best" --set "training.epochs=$best_epoch"
"$PYTHON" - "$tmp/best" "$tmp/at-best" "$DEVICE_TOL" "$best_epoch" <<'PY'
import sys
import numpy as np
best, at_best, tol, epoch = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
p, q = (np.fromfile(f"{d}/params.bin", dtype="<f4") for d in (best, at_best))
assert p.shape == q.shape and p.size > 0, (p.shape, q.shape)
worst = float(np.max(np.abs(p - q) / np.maximum(1.0, np.abs(q))))
assert worst <= tol, f"restore_best on CUDA: parameters differ by {worst:.3g} from epoch {epoch}'s"
a, b = (np.load(f"{d}/predictions.npy") for d in (best, at_best))
agree = float((a == b).mean())
assert a.shape == b.shape and agree >= 0.99, f"predictions agree at {agree:.1%}"
print(f"ok: restore_best on CUDA gives epoch {epoch}'s model: parameters within {worst:.2g}, "
      f"predictions agree at {agree:.1%}")
PY

# training.device=auto with a GPU per rank: the GPU, and the CUDA run's results.
run auto auto 1 "${synthetic[@]}"
"${compare[@]}" sanity "$tmp/auto/auto-w1" --device
"${compare[@]}" losses "$tmp/gen/cuda-w1" "$tmp/auto/auto-w1" "$DEVICE_TOL" --params "$DEVICE_TOL"

# Overlap on the GPU: the same products in the same order as vanilla, only scheduled differently.
run overlap cuda 2 "${synthetic[@]}" --set communication.mode=overlap
"${compare[@]}" losses "$tmp/gen/cuda-w2" "$tmp/overlap/cuda-w2" 0 --params 0

# The cover layout on the GPU: the same sums, with partial sums formed on the sender.
run cover cuda 2 "${synthetic[@]}" --set communication.exchange=cover
"${compare[@]}" losses "$tmp/gen/cuda-w2" "$tmp/cover/cuda-w2" 1e-4 --params 1e-4

# Quantized exchanges: the same widths and wire format on both devices.
for device in cpu cuda; do
  run quant "$device" 2 "${synthetic[@]}" --set communication.mode=quant \
    --set communication.scheme=uniform --set communication.bits=4
  run random "$device" 2 "${synthetic[@]}" --set communication.mode=adaqp \
    --set communication.scheme=random
  run quantcover "$device" 2 "${synthetic[@]}" --set communication.mode=adaqp \
    --set communication.scheme=random --set communication.exchange=cover
done
for name in quant random quantcover; do
  "${compare[@]}" bytes "$tmp/$name/cpu-w2" "$tmp/$name/cuda-w2"
  "${compare[@]}" losses "$tmp/$name/cpu-w2" "$tmp/$name/cuda-w2" 1e-3
done

run adaptive cuda 2 "${synthetic[@]}" --set communication.mode=adaqp \
  --set communication.scheme=adaptive --set communication.objective=normalized
"${compare[@]}" widths "$tmp/adaptive/cuda-w2"
# ... with the width solve beside the epoch (solve_schedule auto: background on a GPU), not
# inline for want of a second communicator: some epoch adopted a solve that ran in the background.
if grep -q "the width solve runs inline" "$tmp/adaptive/cuda-w2.log" ||
    ! "$PYTHON" - "$tmp/adaptive/cuda-w2/metrics.jsonl" <<'PY'; then
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
sys.exit(0 if any(r.get("assign_background_s", 0) > 0 for r in recs) else 1)
PY
  cat "$tmp/adaptive/cuda-w2.log"
  echo "FAIL: the adaptive run on CUDA solved no widths in the background" >&2
  exit 1
fi

# Multi-label: the loss and F1 path on the device.
# shellcheck source=tests/cli/lib/graphsaint_dataset.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/graphsaint_dataset.sh"
make_graphsaint_dataset "$tmp/data/multi" multi
for device in cpu cuda; do
  run multi "$device" 2 --set "dataset.path=$tmp/data/multi" --set communication.mode=vanilla \
    --set output.predictions=true
done
"${compare[@]}" losses "$tmp/multi/cpu-w2" "$tmp/multi/cuda-w2" "$DEVICE_TOL" --params "$DEVICE_TOL"
"$PYTHON" - "$tmp/multi/cpu-w2/predictions.npy" "$tmp/multi/cuda-w2/predictions.npy" <<'PY'
import sys
import numpy as np
cpu, cuda = (np.load(path) for path in sys.argv[1:])
assert cpu.shape == cuda.shape == (240, 4) and cpu.dtype == cuda.dtype == np.uint8, \
    (cpu.shape, cuda.shape, cpu.dtype, cuda.dtype)
agree = float((cpu == cuda).mean())
assert agree >= 0.99, f"multi-label predictions.npy: CUDA agrees with the CPU at {agree:.1%}"
print(f"ok: multi-label predictions.npy (output.predictions) on CUDA agrees with the CPU's at "
      f"{agree:.1%} of its entries")
PY

# ROC-AUC: the device's logits scored on the host as the CPU's are.
for device in cpu cuda; do
  run multi-auc "$device" 2 --set "dataset.path=$tmp/data/multi" --set communication.mode=vanilla \
    --set training.metric=rocauc
done
"$PYTHON" - "$tmp/multi-auc/cpu-w2/metrics.jsonl" "$tmp/multi-auc/cuda-w2/metrics.jsonl" <<'PY'
import json, sys
last = []
for path in sys.argv[1:]:
    rows = [json.loads(line) for line in open(path)]
    assert [r for r in rows if r.get("event") == "summary"][-1]["metric"] == "rocauc", path
    last.append([r for r in rows if "test_acc" in r and "event" not in r][-1])
for key in ("train_acc", "val_acc", "test_acc"):
    assert abs(last[0][key] - last[1][key]) <= 1e-3, (key, last[0][key], last[1][key])
print(f"ok: ROC-AUC on CUDA {last[1]['test_acc']:.4f} against the CPU's {last[0]['test_acc']:.4f} "
      "(test; train and validation within 1e-3 too)")
PY

# Divergence inside a quantized exchange: the codec's error naming the message, on both devices.
diverged="cannot quantize the layer [0-9]+ (forward|backward) message of node [0-9]+ \(epoch 2\): "
diverged+=".*; the training has diverged; lower training.lr; "
diverged+="(last good checkpoint: .*|no checkpoint was written)"
for device in cpu cuda; do
  log="$tmp/nonfinite-$device.log"
  rc=0
  # shellcheck disable=SC2016
  timeout "${ADAQP_RUN_TIMEOUT:-600}" mpirun --oversubscribe --bind-to none -np 2 bash -c \
    'NCCL_HOSTID=adaqp-gpu-test-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$ADAQP_BIN" train \
    "${synthetic[@]}" "${device_training[@]}" --set communication.mode=quant \
    --set communication.scheme=uniform --set training.lr=1e30 \
    --set "training.device=$device" --set partition.parts=2 \
    --set "partition.dir=$tmp/gen-partition-w2" --set "output.dir=$tmp/nonfinite/$device" \
    --set output.log_level=warn >"$log" 2>&1 || rc=$?
  if ((rc == 0 || rc == 124)) || ! grep -Eq "^adaqp: error on rank [01] \(host [^)]*\): $diverged$" "$log"; then
    cat "$log"
    echo "FAIL: a diverging quantized run on $device exited $rc without the codec's error" >&2
    exit 1
  fi
  echo "ok: diverging quantized run on $device: $(grep -Em1 "$diverged" "$log")"
done

# Checkpoints across devices: 15 epochs on one device and one worker, the rest resumed on the
# other device; from CUDA onto 2 CPU workers (another worker count, docs/running.md).
for pair in cuda:cpu:2 cpu:cuda:1; do
  IFS=: read -r first second w2 <<<"$pair"
  out="$tmp/resume-$first-$second"
  common=("${synthetic[@]}" --set "output.dir=$out" --set training.epochs=30 --set training.seed=11
          --set model.dropout=0.5 --set training.checkpoint_every=15 --set output.log_level=info)
  timeout "${ADAQP_RUN_TIMEOUT:-600}" mpirun -np 1 "$ADAQP_BIN" train "${common[@]}" \
    --set partition.parts=1 --set "partition.dir=$tmp/gen-partition-w1" \
    --set "training.device=$first" --set training.epochs=15 >"$out-1.log" 2>&1 ||
    { cat "$out-1.log"; exit 1; }
  # shellcheck disable=SC2016
  timeout "${ADAQP_RUN_TIMEOUT:-600}" mpirun --oversubscribe --bind-to none -np "$w2" bash -c \
    'NCCL_HOSTID=adaqp-gpu-test-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$ADAQP_BIN" train \
    "${common[@]}" --set "partition.parts=$w2" --set "partition.dir=$tmp/gen-partition-w$w2" \
    --set "training.device=$second" --resume >"$out-2.log" 2>&1 || { cat "$out-2.log"; exit 1; }
  if ((w2 != 1)) && ! grep -q "written on 1 workers and training continues on $w2" "$out-2.log"; then
    cat "$out-2.log"
    echo "FAIL: the $first -> $second resume did not continue on $w2 workers" >&2
    exit 1
  fi
  "${compare[@]}" losses "$tmp/gen/$first-w1" "$out" "$DEVICE_TOL" --params "$DEVICE_TOL"
done
# Without Cora the generated half has passed and the Cora half is a visible skip (a failure under
# CI=true).
[[ -d "$cora/raw" ]] || skip_or_fail "shared dataset cora missing at '$cora': its half did not run"
((${#mismatched[@]} == 0)) || fail "CUDA against the CPU at W=2: ${mismatched[*]}"
echo "gpu_train: all passed"
