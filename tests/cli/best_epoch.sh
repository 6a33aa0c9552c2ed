#!/usr/bin/env bash
# The best validation epoch end to end: early stopping from it (training.patience) and its
# parameters put back (training.restore_best). `mpirun -np 2 adaqp train`, one thread a rank.
# Early stopping (GCN, Vanilla, a generated graph whose validation accuracy plateaus below 1): the
# stopping epochs are computed here from the validation curve of a run without patience, not by
# the binary: the run with patience 8 must end at the first epoch at least 8 epochs after the first
# epoch of the best validation score so far, with every record up to there equal to the full
# run's, and the summary must name that best epoch and its test score; with eval_every 3 and
# patience 7, at the first such multiple of 3. Its last checkpoint makes the run finished:
# `--resume` is refused with the reason, and with output.predictions it trains nothing. A run cut 3
# epochs before the stop and resumed from its checkpoint stops at the same epoch with the same
# records: the checkpoint keeps the best epoch (a count restarted at the resume would stop later).
# restore_best: the stopped run's params.bin and predictions.npy are, byte for byte, those of a run
# trained only up to the best epoch; so are they after a resume of a run cut after the best epoch
# (the checkpoint keeps that epoch's parameters), after a resume with it of that shorter run's
# checkpoint (written without it, at its own best epoch), and the finished run's predictions from
# its checkpoint; a checkpoint written without restore_best, past its best epoch, is refused.
# R-GCN with learned featureless rows (each rank's own, outside params.bin) likewise: the
# predictions of the run with restore_best, uninterrupted or cut after its best epoch and resumed,
# are those of a run trained up to that epoch.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
EPOCHS=150

mapfile -t job < <(synthetic_graph 600 seed=3 feature_signal=0.3; gnn_model 2 16
  set_pairs dataset.self_loops=true partition.parts=2 "partition.dir=$tmp/part" training.threads=1 \
    training.device=cpu communication.mode=vanilla training.seed=5 output.log_level=info)

# train NAME ARGS...: trains into $tmp/NAME; ends the test with the log on failure.
train() {
  local name=$1
  shift
  timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$tmp/$name" "$@" >"$tmp/$name.log" 2>&1 ||
    { cat "$tmp/$name.log"; fail "adaqp train $name"; }
}

train full --set "training.epochs=$EPOCHS"
train stop --set "training.epochs=$EPOCHS" --set training.patience=8 \
  --set training.checkpoint_every=50
train sparse --set "training.epochs=$EPOCHS" --set training.patience=7 --set training.eval_every=3

# expected_stop RUN PATIENCE EVERY: the epoch a run with that patience and eval_every stops after,
# and its best epoch, from RUN's validation curve (every epoch evaluated).
expected_stop() {
  "$PYTHON" - "$tmp/$1/metrics.jsonl" "$2" "$3" <<'PY'
import json, sys

path, patience, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
val = {r["epoch"]: r["val_acc"] for r in map(json.loads, open(path))
       if r.get("rank") == 0 and "val_acc" in r}
best_epoch, best = None, None
for e in sorted(val):
    if e % every:
        continue
    if best is None or val[e] > best:
        best_epoch, best = e, val[e]
    if e - best_epoch >= patience:
        print(e, best_epoch)
        break
else:
    sys.exit(f"{path}: no stop with patience {patience} every {every} in {len(val)} epochs")
PY
}
read -r stop stop_best < <(expected_stop full 8 1) || fail "the full run's curve gives no stop"
read -r sparse sparse_best < <(expected_stop full 7 3) || fail "no stop every 3 epochs"
echo "expected: patience 8 stops after epoch $stop (best $stop_best), eval_every 3 with patience 7" \
  "after $sparse (best $sparse_best)"

# check RUN LAST BEST: RUN's records are the full run's up to epoch LAST (losses and scores, to the
# bit) and its summary says it stopped early there, with BEST's scores.
check() {
  "$PYTHON" - "$tmp/full/metrics.jsonl" "$tmp/$1/metrics.jsonl" "$2" "$3" <<'PY'
import json, sys

full_path, path, last, best = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
keys = ("epoch", "rank", "loss", "train_acc", "val_acc", "test_acc")
def records(p):
    rows = [json.loads(l) for l in open(p)]
    return [tuple(r.get(k) for k in keys) for r in rows if "event" not in r], \
        [r for r in rows if r.get("event") == "summary"]
full, _ = records(full_path)
got, summary = records(path)
full_at = {r[:2]: r for r in full}
assert [g[:2] for g in got] == [r[:2] for r in full if r[0] <= last], \
    f"{path}: not the full run's epochs 1..{last}"
for g in got:
    w = full_at[g[:2]]
    assert g[2] == w[2], f"{path}: the loss of epoch {g[0]} differs: {g[2]} vs {w[2]}"
    assert g[4] is None or g[3:] == w[3:], f"{path}: scores of epoch {g[0]} differ: {g} vs {w}"
assert len(summary) == 1, summary
s = summary[0]
test_at = {r[0]: r[5] for r in full if r[1] == 0}
val_at = {r[0]: r[4] for r in full if r[1] == 0}
assert s["stopped_early"] is True and s["epochs"] == last, s
assert s["best_epoch"] == best and s["best_val_acc"] == val_at[best], s
assert s["test_acc_at_best_val"] == test_at[best] and s["final_test_acc"] == test_at[last], s
print(f"ok: {path}: stopped after epoch {last}, best validation at epoch {best}")
PY
}
check stop "$stop" "$stop_best"
check sparse "$sparse" "$sparse_best"
"$PYTHON" - "$tmp/full/metrics.jsonl" "$EPOCHS" <<'PY' || fail "the run without patience"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][0]
assert s["stopped_early"] is False and s["epochs"] == int(sys.argv[2]), s
PY
grep -q "stopping early after epoch $stop: no better validation accuracy than epoch $stop_best's" \
  "$tmp/stop.log" || { cat "$tmp/stop.log"; fail "no stopping line in the log"; }
[[ -f "$tmp/stop/checkpoints/ckpt-$(printf %06d "$stop").bin" ]] ||
  fail "no checkpoint of epoch $stop: $(ls "$tmp/stop/checkpoints")"

# The stopped run is finished.
if timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$tmp/stop" --set "training.epochs=$EPOCHS" --set training.patience=8 \
    --set training.checkpoint_every=50 --resume >"$tmp/again.log" 2>&1; then
  cat "$tmp/again.log"
  fail "--resume of a run that stopped early trained on"
fi
refusal="is at epoch $stop and training.patience 8 ends the run there (best validation at epoch"
grep -q "$refusal $stop_best)" "$tmp/again.log" || { cat "$tmp/again.log"; fail "the refusal does not say why"; }
cp "$tmp/stop/metrics.jsonl" "$tmp/stop-metrics.jsonl"
train stop --set "training.epochs=$EPOCHS" --set training.patience=8 \
  --set training.checkpoint_every=50 --set output.predictions=true --resume
grep -q "training had finished at epoch $stop: nothing trained" "$tmp/stop.log" ||
  { cat "$tmp/stop.log"; fail "the finished run trained"; }
cmp -s "$tmp/stop/metrics.jsonl" "$tmp/stop-metrics.jsonl" || fail "metrics.jsonl changed"
[[ -f "$tmp/stop/predictions.npy" ]] || fail "no predictions.npy"

# Cut 3 epochs before the stop, then resumed with the full epoch count.
train cut --set "training.epochs=$((stop - 3))" --set training.patience=8 \
  --set training.checkpoint_every=1000
train cut --set "training.epochs=$EPOCHS" --set training.patience=8 \
  --set training.checkpoint_every=1000 --resume
check cut "$stop" "$stop_best"

# same A B: A's params.bin and predictions.npy are B's, byte for byte.
same() {
  local f
  for f in params.bin predictions.npy; do
    cmp -s "$tmp/$1/$f" "$tmp/$2/$f" || fail "$1/$f differs from $2/$f"
  done
  echo "ok: $1 has the parameters and predictions of $2"
}
# params_epoch RUN: the epoch whose parameters RUN's summary says params.bin holds.
params_epoch() {
  "$PYTHON" -c 'import json, sys
print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]["params_epoch"])' \
    "$tmp/$1/metrics.jsonl"
}
best=(--set training.patience=8 --set training.restore_best=true --set output.predictions=true)
train best --set "training.epochs=$EPOCHS" "${best[@]}" --set training.checkpoint_every=50
train at_best --set "training.epochs=$stop_best" --set output.predictions=true \
  --set training.checkpoint_every=1000
same best at_best
# A checkpoint written without restore_best at its own best epoch resumes with it: that epoch's
# parameters are its live ones.
cp -r "$tmp/at_best" "$tmp/from_own_best"
train from_own_best --set "training.epochs=$EPOCHS" "${best[@]}" \
  --set training.checkpoint_every=1000 --resume
same from_own_best at_best
[[ $(params_epoch best) == "$stop_best" && $(params_epoch stop) == "$stop" ]] ||
  fail "params_epoch: $(params_epoch best) and $(params_epoch stop), not $stop_best and $stop"
cp "$tmp/best/predictions.npy" "$tmp/best-predictions.npy"
rm "$tmp/best/predictions.npy"
train best --set "training.epochs=$EPOCHS" "${best[@]}" --set training.checkpoint_every=50 --resume
cmp -s "$tmp/best/predictions.npy" "$tmp/best-predictions.npy" ||
  fail "the finished run's predictions from its checkpoint are not the best epoch's"
train cut_best --set "training.epochs=$((stop - 3))" "${best[@]}" \
  --set training.checkpoint_every=1000
train cut_best --set "training.epochs=$EPOCHS" "${best[@]}" --set training.checkpoint_every=1000 \
  --resume
same cut_best at_best
if timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$tmp/stop" --set "training.epochs=$EPOCHS" "${best[@]}" \
    --set training.checkpoint_every=50 --resume >"$tmp/no-best.log" 2>&1; then
  cat "$tmp/no-best.log"
  fail "a checkpoint without the best epoch's parameters resumed with restore_best"
fi
grep -q "holds no parameters of its best validation epoch $stop_best: it was written without" \
  "$tmp/no-best.log" || { cat "$tmp/no-best.log"; fail "the refusal does not say why"; }

# R-GCN with learned featureless rows.
mapfile -t job < <(synthetic_graph 1500 seed=5 heterogeneous=true feature_signal=0.5
  gnn_model 2 16 type=rgcn num_bases=3 featureless=embedding
  set_pairs dataset.add_reverse=true partition.parts=2 "partition.dir=$tmp/part-typed" \
    training.threads=1 training.device=cpu communication.mode=vanilla training.seed=5 \
    output.predictions=true output.log_level=info)
typed_epochs=60
train rgcn --set "training.epochs=$typed_epochs" --set training.restore_best=true
rgcn_best=$(params_epoch rgcn)
# The first epoch of the highest validation score, read from the run's records, not its summary.
curve_best=$("$PYTHON" -c 'import json, sys
val = {r["epoch"]: r["val_acc"] for r in map(json.loads, open(sys.argv[1]))
       if r.get("rank") == 0 and "val_acc" in r}
print(min(e for e in val if val[e] == max(val.values())))' "$tmp/rgcn/metrics.jsonl")
[[ $rgcn_best == "$curve_best" ]] ||
  fail "R-GCN kept epoch $rgcn_best, its validation curve peaks first at $curve_best"
((rgcn_best + 2 < typed_epochs)) ||
  fail "R-GCN's best epoch $rgcn_best is too late to cut the run after it"
train rgcn_at_best --set "training.epochs=$rgcn_best"
train rgcn_cut --set "training.epochs=$((rgcn_best + 2))" --set training.restore_best=true \
  --set training.checkpoint_every=1000
train rgcn_cut --set "training.epochs=$typed_epochs" --set training.restore_best=true \
  --set training.checkpoint_every=1000 --resume
for run in rgcn rgcn_cut; do
  cmp -s "$tmp/$run/predictions.npy" "$tmp/rgcn_at_best/predictions.npy" ||
    fail "$run's predictions are not those of R-GCN trained up to its best epoch $rgcn_best"
done
echo "ok: R-GCN's predictions with restore_best are those of epoch $rgcn_best"
echo "best_epoch: all passed"
