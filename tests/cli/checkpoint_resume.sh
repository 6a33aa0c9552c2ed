#!/usr/bin/env bash
# Checkpoints and `adaqp train --resume` (and --resume=auto): a run cut short and resumed from its
# newest checkpoint reproduces the uninterrupted run bitwise (every epoch's loss and scores, the
# summary's scores and the final parameters), with dropout on, for GCN on 2 workers (full precision,
# and quantized with overlap) and SAGE with LayerNorm on 3; a damaged newest checkpoint is skipped for the one before it; a checkpoint of
# another model or seed is refused with one error naming the field and both values. Another worker
# count is not refused: tests/cli/checkpoint_elastic.sh.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

mapfile -t job < <(synthetic_graph 1500 seed=5; gnn_model 2 16 dropout=0.5
  set_pairs communication.mode=vanilla training.device=cpu training.seed=11 training.threads=1 \
    output.log_level=info)

# train NAME W ARGS...: `adaqp train` on W workers; output in $tmp/NAME.log.
train() {
  local name=$1 w=$2
  shift 2
  if ! timeout 300 mpirun --oversubscribe -np "$w" "$ADAQP_BIN" train "${job[@]}" "$@" \
      >>"$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log"
    echo "FAIL: $name on $w workers" >&2
    exit 1
  fi
}

# same REF RUN FIRST: the two output directories hold identical per-epoch records (times aside),
# summary scores and parameters; RUN's summary covers its epochs from FIRST on (the resumed ones),
# REF's all, and each summary's mean epoch time is the mean of its slowest ranks' over those.
same() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys

def check_mean(d, summary, times, first):
    assert summary["first_epoch"] == first, f"{d}: summary first_epoch {summary['first_epoch']} != {first}"
    slowest = [max(t for (e, _), t in times.items() if e == epoch)
               for epoch in range(first, summary["epochs"] + 1)]
    mean = sum(slowest) / len(slowest)
    assert abs(summary["mean_epoch_time_s"] - mean) <= 1e-9 * mean, \
        f"{d}: mean_epoch_time_s {summary['mean_epoch_time_s']} != {mean} over epochs {first}-"

def load(d, first):
    epochs, summary, times = {}, None, {}
    with open(d + "/metrics.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == "summary":
                assert summary is None, f"{d}: two summaries"
                summary = r
                continue
            key = (r["epoch"], r["rank"])
            assert key not in epochs, f"{d}: epoch {key} recorded twice"
            times[key] = r["epoch_time_s"]
            epochs[key] = {k: r.get(k) for k in ("loss", "train_acc", "val_acc", "test_acc",
                                                   "bytes_sent")}
    assert summary is not None, f"{d}: no summary"
    check_mean(d, summary, times, first)
    with open(d + "/params.bin", "rb") as f:
        params = f.read()
    return epochs, summary, params

ref, run = load(sys.argv[1], 1), load(sys.argv[2], int(sys.argv[3]))
assert sorted(ref[0]) == sorted(run[0]), (sorted(ref[0])[-3:], sorted(run[0])[-3:])
for key in ref[0]:
    assert ref[0][key] == run[0][key], f"epoch {key}: {ref[0][key]} != {run[0][key]}"
for k in ("best_val_acc", "test_acc_at_best_val", "final_test_acc", "epochs", "world_size"):
    assert ref[1][k] == run[1][k], f"summary {k}: {ref[1][k]} != {run[1][k]}"
assert len(ref[2]) > 0 and ref[2] == run[2], "final parameters differ"
print(f"ok: {sys.argv[2]} equals {sys.argv[1]}: {len(ref[0])} records, "
      f"final loss {ref[0][max(ref[0])]['loss']}")
PY
}

# shellcheck source=tests/cli/lib/expect_failure.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect_failure.sh"
# expect_error NAME W PATTERN ARGS...: expect_failure with the job's keys first.
expect_error() {
  local name=$1 w=$2 pattern=$3
  shift 3
  expect_failure "$name" "$w" "$pattern" "${job[@]}" "$@"
}

# GCN, 2 workers: the reference run, and a run stopped after 6 epochs (its final checkpoint) then
# resumed to 12, both with --resume=auto (what a requeued job passes: the first run finds no
# checkpoint and starts from epoch 1, the second continues).
gcn=(--set model.type=gcn --set partition.parts=2 --set training.checkpoint_every=4)
train gcn_ref 2 "${gcn[@]}" --set "output.dir=$tmp/gcn_ref" --set training.epochs=12
[[ "$(ls "$tmp/gcn_ref/checkpoints")" == $'ckpt-000008.bin\nckpt-000012.bin' ]] ||
  { ls "$tmp/gcn_ref/checkpoints"; echo "FAIL: expected the newest 2 checkpoints kept" >&2; exit 1; }
train gcn_cut 2 "${gcn[@]}" --set "output.dir=$tmp/gcn_cut" --set training.epochs=6 --resume=auto
grep -q -- "--resume=auto: no checkpoint in $tmp/gcn_cut/checkpoints" "$tmp/gcn_cut.log" ||
  { cat "$tmp/gcn_cut.log"; echo "FAIL: --resume=auto without a checkpoint" >&2; exit 1; }
train gcn_cut 2 "${gcn[@]}" --set "output.dir=$tmp/gcn_cut" --set training.epochs=12 --resume=auto
grep -q "resuming from $tmp/gcn_cut/checkpoints/ckpt-000006.bin (epoch 6)" "$tmp/gcn_cut.log" ||
  { cat "$tmp/gcn_cut.log"; echo "FAIL: did not resume from epoch 6" >&2; exit 1; }
same "$tmp/gcn_ref" "$tmp/gcn_cut" 7
! grep -q "keys changed" "$tmp/gcn_cut.log" ||
  { cat "$tmp/gcn_cut.log"; echo "FAIL: a resume with more epochs warned of changed keys" >&2; exit 1; }
# Resumed into another output.dir from the same checkpoints: its metrics.jsonl lacks the epochs
# before the checkpoint, which the run says.
train gcn_moved 2 "${gcn[@]}" --set "output.dir=$tmp/gcn_moved" --set training.epochs=14 \
  --set "training.checkpoint_dir=$tmp/gcn_cut/checkpoints" --resume
grep -q "gcn_moved/metrics.jsonl: holds the records of 0 of the epochs 1-12" "$tmp/gcn_moved.log" ||
  { cat "$tmp/gcn_moved.log"; echo "FAIL: no warning of the missing epochs" >&2; exit 1; }

# Quantized and overlapped (AdaQP with random widths), 2 workers: widths and stochastic rounding
# are Philox draws of seed and epoch, so the resumed epochs send the same codes. The adaptive
# scheme is not bitwise across a resume: its traces and measured times are not in a checkpoint.
quant=(--set model.type=gcn --set partition.parts=2 --set training.checkpoint_every=3
       --set communication.mode=adaqp --set communication.scheme=random)
train quant_ref 2 "${quant[@]}" --set "output.dir=$tmp/quant_ref" --set training.epochs=8
train quant_cut 2 "${quant[@]}" --set "output.dir=$tmp/quant_cut" --set training.epochs=3
train quant_cut 2 "${quant[@]}" --set "output.dir=$tmp/quant_cut" --set training.epochs=8 --resume
same "$tmp/quant_ref" "$tmp/quant_cut" 4
python3 "$ADAQP_SOURCE_DIR/tests/cli/lib/compare_runs.py" sanity "$tmp/quant_ref"
python3 - "$tmp/gcn_ref" "$tmp/quant_ref" <<'PY' || exit 1
import json, sys
def first_bytes(d):
    for line in open(d + "/metrics.jsonl"):
        r = json.loads(line)
        if r.get("epoch") == 1 and r.get("rank") == 0:
            return r["bytes_sent"]
full, quant = first_bytes(sys.argv[1]), first_bytes(sys.argv[2])
assert 0 < quant < full / 2, f"FAIL: the quantized run sent {quant} bytes, full precision {full}"
PY

# A resume under another learning rate trains, and warns naming the key and both values (the
# replaced config.yaml would otherwise hide what the earlier epochs trained under).
cp -r "$tmp/gcn_cut" "$tmp/gcn_lr"
cp -r "$tmp/gcn_cut" "$tmp/gcn_same"
train gcn_lr 2 "${gcn[@]}" --set "output.dir=$tmp/gcn_lr" --set training.epochs=16 \
  --set training.lr=0.05 --resume
grep -A1 -- "--resume: keys changed since the run's $tmp/gcn_lr/config.yaml was written:" \
  "$tmp/gcn_lr.log" | grep -q "^  training.lr: 0.01 -> 0.05$" ||
  { cat "$tmp/gcn_lr.log"; echo "FAIL: no warning of the changed training.lr" >&2; exit 1; }
# ... and the new rate is the one in use: from the same checkpoint (epoch 14, gcn_moved's), epoch
# 15's loss (the checkpoint's parameters) equals that of the same resume under the old rate, epoch
# 16's (after one step at each rate) does not.
train gcn_same 2 "${gcn[@]}" --set "output.dir=$tmp/gcn_same" --set training.epochs=16 --resume
python3 - "$tmp/gcn_lr" "$tmp/gcn_same" <<'PY' || exit 1
import json, sys
def losses(d):
    return {r["epoch"]: r["loss"] for r in map(json.loads, open(d + "/metrics.jsonl"))
            if r.get("rank") == 0 and "loss" in r and "epoch" in r}
new, old = losses(sys.argv[1]), losses(sys.argv[2])
assert sorted(new)[-2:] == [15, 16] and sorted(old)[-2:] == [15, 16], f"FAIL: epochs {sorted(new)}, {sorted(old)}"
assert new[15] == old[15], f"FAIL: epoch 15's loss {new[15]} != {old[15]}: not the same checkpoint"
assert new[16] != old[16], f"FAIL: epoch 16's loss {new[16]} under lr 0.05 equals lr 0.01's"
PY

# SAGE with LayerNorm, 3 workers, evaluated every 3 epochs: the newest checkpoint (epoch 7, the
# end of the cut run) is damaged, so the resume falls back to epoch 5.
sage=(--set model.type=sage --set model.layer_norm=true --set partition.parts=3
      --set partition.method=random --set training.checkpoint_every=5 --set training.eval_every=3)
train sage_ref 3 "${sage[@]}" --set "output.dir=$tmp/sage_ref" --set training.epochs=14
train sage_cut 3 "${sage[@]}" --set "output.dir=$tmp/sage_cut" --set training.epochs=7
newest="$tmp/sage_cut/checkpoints/ckpt-000007.bin"
head -c 1000 "$newest" >"$newest.part" && mv "$newest.part" "$newest"
train sage_cut 3 "${sage[@]}" --set "output.dir=$tmp/sage_cut" --set training.epochs=14 --resume
if ! grep -q "skipping unreadable checkpoint: $newest" "$tmp/sage_cut.log" ||
    ! grep -q "resuming from $tmp/sage_cut/checkpoints/ckpt-000005.bin (epoch 5)" \
      "$tmp/sage_cut.log"; then
  cat "$tmp/sage_cut.log"
  echo "FAIL: did not fall back to epoch 5" >&2
  exit 1
fi
same "$tmp/sage_ref" "$tmp/sage_cut" 6
# The damaged file is left alone and not counted: the resumed run kept two intact checkpoints
# besides it (10 and 14; counted, it had cost the intact 5 at epoch 10, itself at 14).
kept=$(cd "$tmp/sage_cut/checkpoints" && echo ckpt-*.bin)
if [[ $kept != "ckpt-000007.bin ckpt-000010.bin ckpt-000014.bin" ]]; then
  echo "FAIL: checkpoints after the resume past a damaged one: $kept" >&2
  exit 1
fi

# Refusals, each naming the field and both values.
resume=(--set model.type=gcn --set training.checkpoint_every=4 --set training.epochs=20 --resume
        --set "training.checkpoint_dir=$tmp/gcn_ref/checkpoints")
expect_error other_hidden 2 "model.hidden: checkpoint has 16, this job has 32" "${resume[@]}" \
  --set "output.dir=$tmp/gcn_ref" --set model.hidden=32
expect_error other_seed 2 "training.seed: checkpoint has 11, this job has 12" "${resume[@]}" \
  --set "output.dir=$tmp/gcn_ref" --set training.seed=12
# ... before the dataset is partitioned: --repartition does not replace the partition first.
cp "$tmp/gcn_ref/partition/meta.yaml" "$tmp/meta.keep"
expect_error other_seed_repartition 2 "training.seed: checkpoint has 11, this job has 12" \
  "${resume[@]}" --set "output.dir=$tmp/gcn_ref" --set training.seed=12 --repartition
if grep -q "to be replaced" "$tmp/other_seed_repartition.log" ||
    ! cmp -s "$tmp/meta.keep" "$tmp/gcn_ref/partition/meta.yaml"; then
  echo "FAIL: a refused --resume --repartition replaced the partition first" >&2
  exit 1
fi
expect_error other_dataset 2 "dataset fingerprint: checkpoint has" "${resume[@]}" \
  --set "output.dir=$tmp/d2" --set partition.parts=2 --set dataset.synthetic.seed=6
# ... and when the dataset differs, --repartition leaves the run's partition as it was, for a plain
# --resume of the run (found by a review, 2026-12-06: the partition was replaced first).
expect_error other_dataset_repartition 2 "dataset fingerprint: checkpoint has" "${resume[@]}" \
  --set "output.dir=$tmp/gcn_ref" --set dataset.synthetic.seed=6 --repartition
if ! cmp -s "$tmp/meta.keep" "$tmp/gcn_ref/partition/meta.yaml" ||
    ! grep -q "$tmp/gcn_ref/partition left as it was" "$tmp/other_dataset_repartition.log"; then
  cat "$tmp/other_dataset_repartition.log"
  echo "FAIL: a --resume --repartition refused for its dataset replaced the partition" >&2
  exit 1
fi
# ... and when training.restore_best asks for the parameters of a best epoch the checkpoint did not
# keep (found by a review, 2026-12-08: refused only once the partition was replaced); a learning
# rate this high puts the best epoch before the last.
lr_high=(--set model.type=gcn --set partition.parts=2 --set training.checkpoint_every=8
         --set training.lr=1.0 --set "output.dir=$tmp/lr_high")
train lr_high 2 "${lr_high[@]}" --set training.epochs=8
best=$(python3 -c 'import json, sys
print([r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "summary"][0]["best_epoch"])' \
  "$tmp/lr_high/metrics.jsonl")
((best < 8)) || fail "lr_high's best epoch is its last (8): restore_best has nothing to refuse"
cp "$tmp/lr_high/partition/meta.yaml" "$tmp/lr_high.keep"
expect_error restore_best_repartition 2 "holds no parameters of its best validation epoch $best" \
  "${lr_high[@]}" --set training.epochs=12 --set training.restore_best=true --resume --repartition
if grep -q "to be replaced" "$tmp/restore_best_repartition.log" ||
    ! cmp -s "$tmp/lr_high.keep" "$tmp/lr_high/partition/meta.yaml"; then
  echo "FAIL: a --resume --repartition refused for restore_best replaced the partition first" >&2
  exit 1
fi
# R-GCN on a graph with a featureless node type, resumed on 1 worker: model.num_bases and
# model.featureless changed are refused before the 2-worker partition is replaced too (num_bases is
# in the checkpoint's header; whether rows are learned, the dataset says).
typed=(--set dataset.synthetic.heterogeneous=true --set dataset.add_reverse=true
       --set model.type=rgcn --set training.checkpoint_every=3 --set "output.dir=$tmp/typed")
train typed 2 "${typed[@]}" --set training.epochs=3 --set partition.parts=2
cp "$tmp/typed/partition/meta.yaml" "$tmp/typed.keep"
for change in "model.num_bases=2|model.num_bases: checkpoint has 0, this job has 2" \
    "model.featureless=embedding|learned featureless rows (model.featureless = embedding): checkpoint has false, this job has true"; do
  name=typed_${change%%=*}
  name=${name//./_}
  expect_error "$name" 1 "${change#*|}" "${typed[@]}" --set training.epochs=6 \
    --set partition.parts=1 --set "${change%%|*}" --resume --repartition
  cmp -s "$tmp/typed.keep" "$tmp/typed/partition/meta.yaml" ||
    fail "a --resume --repartition refused for ${change%%|*} replaced the partition first"
done
expect_error nothing_left 2 "is at epoch 12 and training.epochs is 12: nothing left to train" \
  "${resume[@]}" --set "output.dir=$tmp/gcn_ref" --set training.epochs=12
expect_error no_checkpoint 2 "--resume: no checkpoint in $tmp/none/checkpoints" \
  --set "output.dir=$tmp/none" --set partition.parts=2 --resume
mkdir -p "$tmp/file-dir" && echo x >"$tmp/file-dir/checkpoints"
expect_error checkpoint_dir_file 2 "--resume: not a directory: $tmp/file-dir/checkpoints" \
  --set "output.dir=$tmp/file-dir" --set partition.parts=2 --resume
expect_error resume_value 2 "--resume: sometimes not in {always,auto}" \
  --set "output.dir=$tmp/none" --set partition.parts=2 --resume=sometimes
[[ ! -e $tmp/none/partition ]] ||
  { echo "FAIL: a resume without checkpoints partitioned the dataset first" >&2; exit 1; }
# A metrics.jsonl the resumed run cannot keep is found at start-up, before training (no abort).
cp "$tmp/gcn_ref/metrics.jsonl" "$tmp/metrics.keep"
cp "$tmp/gcn_ref/config.yaml" "$tmp/config.keep"
echo '{not json' >>"$tmp/gcn_ref/metrics.jsonl"
expect_error bad_metrics 2 "$tmp/gcn_ref/metrics.jsonl: line" "${resume[@]}" \
  --set "output.dir=$tmp/gcn_ref"
! grep -q "MPI_ABORT" "$tmp/bad_metrics.log" ||
  { cat "$tmp/bad_metrics.log"; echo "FAIL: bad_metrics ended in MPI_Abort" >&2; exit 1; }
# ... and the failed resume left the run's config.yaml as it was.
cmp -s "$tmp/config.keep" "$tmp/gcn_ref/config.yaml" ||
  { echo "FAIL: a failed resume rewrote config.yaml" >&2; exit 1; }
mv "$tmp/metrics.keep" "$tmp/gcn_ref/metrics.jsonl"
expect_error stale_checkpoints 2 "$tmp/gcn_ref/checkpoints already holds checkpoints" \
  "${gcn[@]}" --set "output.dir=$tmp/gcn_ref" --set training.epochs=12
# ... even by a run that writes none: a later --resume would continue the earlier run over the new
# run's metrics.jsonl.
expect_error stale_checkpoints_unwritten 2 "$tmp/gcn_ref/checkpoints already holds checkpoints" \
  "${gcn[@]}" --set "output.dir=$tmp/gcn_ref" --set training.epochs=12 \
  --set training.checkpoint_every=0
cmp -s "$tmp/config.keep" "$tmp/gcn_ref/config.yaml" ||
  { echo "FAIL: a refused new run rewrote config.yaml" >&2; exit 1; }
echo "checkpoint_resume: all passed"
