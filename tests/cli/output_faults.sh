#!/usr/bin/env bash
# What a run leaves in its output directory when the file system fails it, and what the next run
# makes of that (docs/running.md, Errors):
# - a disk with room for the records but not for params.bin, or for params.bin but not for
#   predictions.npy, fails the job naming that file, and metrics.jsonl has no summary record (only
#   a finished run writes one);
# - a full disk (a tmpfs of a few KiB, in a private mount namespace) stops training at the first
#   metrics record it cannot write, not at the end, with one error naming metrics.jsonl and the
#   system's reason; no params.bin and no temporary file are left; once there is room again,
#   --resume continues from the last checkpoint, dropping the record the full disk cut short, and
#   the resumed run's metrics hold every epoch once;
# - a second job writing into an output.dir whose lock another process holds stops before it
#   writes anything (not even the partition it would make under output.dir), naming output.dir
#   and the holder; a job whose output.dir another job made and wrote into while it started stops
#   at its lock, leaving the other's output; a job that makes output.dir as its partition's parent
#   locks it then, and a job started meanwhile stops at that lock while the first trains;
# - the temporaries of a writer that was killed (a checkpoint's, a partition directory's,
#   params.bin's) are removed by the next run that writes there; a live writer's are kept;
# - a training.checkpoint_dir that is a dangling symbolic link is refused at start-up, naming the
#   key, before anything is written;
# - an earlier run's metrics.jsonl that cannot be written (a read-only bind mount of it), or that
#   is not a file (a FIFO, a directory), stops the job before its config.yaml replaces the earlier
#   one;
# - so does an earlier run's params.bin that cannot be replaced (a bind mount of it: a mount point
#   cannot be removed or renamed over), before training rather than after it.
# Needs root (mount namespaces); skips visibly without (fails when CI=true).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
((EUID == 0)) || skip_or_fail "needs root for a private mount namespace (a small tmpfs)"
unshare --mount true 2>/dev/null || skip_or_fail "unshare --mount is not permitted here"

mapfile -t job < <(synthetic_graph 800 seed=3; gnn_model 2 16
  set_pairs partition.parts=2 "partition.dir=$tmp/part" training.threads=1 training.device=cpu \
    output.log_level=warn)
# train LOG ARGS...: `adaqp train` on 2 workers, output in LOG; its exit status.
train() {
  local log=$1
  shift
  timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" "$@" >"$log" 2>&1
}
# A pid no process has: one that ended.
sh -c 'exit 0' &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && fail "pid $dead still runs"
# The partition, made once; a stale temporary of a killed partitioning beside a live one's.
mkdir -p "$tmp/part.tmp-$dead/part-0" "$tmp/part.tmp-$$"
train "$tmp/first.log" --set "output.dir=$tmp/first" --set training.epochs=2 ||
  fail "first run: $(cat "$tmp/first.log")"
[[ ! -e $tmp/part.tmp-$dead && -d $tmp/part.tmp-$$ ]] ||
  fail "partitioning: the killed writer's temporary should go, the live one's stay: $(ls "$tmp")"
rmdir "$tmp/part.tmp-$$"
echo "ok: a killed partitioning's temporary removed, a live writer's kept"

# A full disk: the job's output on a 16 KiB tmpfs, checkpoints (every epoch) beside it with room.
cat >"$tmp/full.sh" <<'EOF'
set -u
out=$1 size=$2 log=$3
shift 3
mount -t tmpfs -o "size=$size" tmpfs "$out" || exit 90
timeout 120 mpirun --oversubscribe -np 2 "$@" >"$log" 2>&1
rc=$?
cp -a "$out/." "$out.copy"
exit $rc
EOF
mkdir -p "$tmp/full" "$tmp/full.copy"
rc=0
unshare --mount --propagation private bash "$tmp/full.sh" "$tmp/full" 16k "$tmp/full.log" \
  "$ADAQP_BIN" train "${job[@]}" --set "output.dir=$tmp/full" --set training.epochs=400 \
  --set training.checkpoint_every=1 --set "training.checkpoint_dir=$tmp/ckpt" || rc=$?
((rc != 90)) || fail "could not mount a tmpfs"
if ((rc == 0 || rc == 124)) || ! grep -q \
  "adaqp: error on rank 0 (host .*): $tmp/full/metrics.jsonl: write failed: No space left on device" \
  "$tmp/full.log"; then
  fail "full disk (exit $rc): $(cat "$tmp/full.log")"
fi
epochs=$(grep -c '"epoch"' "$tmp/full.copy/metrics.jsonl" || true)
newest=$(find "$tmp/ckpt" -name 'ckpt-*.bin' | sort | tail -1)
# The last epoch with a record, and the newest checkpoint's: at most one epoch apart (the
# checkpoint of the epoch whose record failed), not the epochs a run going on would add.
last=$(grep -o '"epoch": *[0-9]*' "$tmp/full.copy/metrics.jsonl" | grep -o '[0-9]*$' | sort -n |
  tail -1)
newest_epoch=$(basename "${newest:-ckpt-0.bin}" .bin)
newest_epoch=$((10#${newest_epoch#ckpt-}))
if [[ -z $newest || -z $last || -e $tmp/full.copy/params.bin ]] || ((newest_epoch > last + 1)); then
  fail "full disk: training went on after the failed write: $epochs records (last epoch" \
    "'$last'), newest checkpoint '$newest': $(ls -a "$tmp/full.copy")"
fi
[[ -z $(find "$tmp/full.copy" "$tmp/ckpt" -name '*.tmp-*') ]] || fail "temporaries left behind"
[[ $(tail -c 1 "$tmp/full.copy/metrics.jsonl" | od -An -c | tr -d ' ') != '\n' ]] ||
  echo "note: the full disk cut no record short this time"
echo "ok: full disk stops at once ($epochs records, the last of epoch $last, newest checkpoint" \
  "${newest##*/}):" \
  "$(grep -m1 "adaqp: error" "$tmp/full.log")"

# Room again: the resumed run continues from the newest checkpoint; every epoch once.
rm -rf "$tmp/full" && mv "$tmp/full.copy" "$tmp/full"
# A killed checkpoint writer's temporary, and a live one's (this shell's).
touch "$tmp/ckpt/ckpt-000999.bin.tmp-$dead" "$tmp/ckpt/ckpt-000998.bin.tmp-$$" \
  "$tmp/ckpt/notes.tmp-$dead" "$tmp/full/params.bin.tmp-$dead" \
  "$tmp/full/predictions.npy.tmp-$dead"
train "$tmp/resume.log" --set "output.dir=$tmp/full" --set training.epochs=40 \
  --set training.checkpoint_every=1 --set "training.checkpoint_dir=$tmp/ckpt" --resume \
  --set output.log_level=info ||
  fail "resume after the full disk: $(cat "$tmp/resume.log")"
python3 - "$tmp/full/metrics.jsonl" <<'PY' || fail "resumed metrics: $(cat "$tmp/resume.log")"
import collections, json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
seen = collections.Counter((r["epoch"], r["rank"]) for r in records if "event" not in r)
want = {(e, r) for e in range(1, 41) for r in range(2)}
assert set(seen) == want and max(seen.values()) == 1, sorted(set(want) ^ set(seen))[:5]
assert records[-1].get("event") == "summary" and records[-1]["epochs"] == 40, records[-1]
PY
[[ ! -e $tmp/ckpt/ckpt-000999.bin.tmp-$dead && -e $tmp/ckpt/ckpt-000998.bin.tmp-$$ &&
  -e $tmp/ckpt/notes.tmp-$dead && ! -e $tmp/full/params.bin.tmp-$dead &&
  ! -e $tmp/full/predictions.npy.tmp-$dead ]] &&
  grep -q "removed $tmp/full/predictions.npy.tmp-$dead: left by a process" "$tmp/resume.log" ||
  fail "the killed writers' temporaries should go, the live one's and others' files stay:" \
    "$(ls "$tmp/ckpt" "$tmp/full")"
echo "ok: resumed after the full disk ($(grep -c "dropped a record that a failed write cut short" "$tmp/resume.log")" \
  "cut record dropped); epochs 1-40 once each; a killed checkpoint writer's temporary removed"

# Room for the run's records but not for its parameters (1024 hidden units: about 300 KiB on a 64
# KiB tmpfs): the job fails naming params.bin, and metrics.jsonl holds every epoch but no summary,
# which only a finished run writes.
mkdir -p "$tmp/noparams" "$tmp/noparams.copy"
rc=0
unshare --mount --propagation private bash "$tmp/full.sh" "$tmp/noparams" 64k \
  "$tmp/noparams.log" "$ADAQP_BIN" train "${job[@]}" --set "output.dir=$tmp/noparams" \
  --set training.epochs=2 --set model.hidden=1024 --set training.checkpoint_every=1 \
  --set "training.checkpoint_dir=$tmp/noparams_ckpt" || rc=$?
((rc != 90)) || fail "could not mount a tmpfs"
if ((rc == 0 || rc == 124)) || ! grep -q "adaqp: error.*params.bin.*No space left on device" \
  "$tmp/noparams.log"; then
  fail "no room for params.bin (exit $rc): $(cat "$tmp/noparams.log")"
fi
python3 - "$tmp/noparams.copy/metrics.jsonl" <<'PY' || fail "no room for params.bin: metrics"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert sorted((r["epoch"], r["rank"]) for r in records if "event" not in r) == [
    (e, r) for e in (1, 2) for r in (0, 1)], records
assert not any(r.get("event") == "summary" for r in records), "a summary for a run that failed"
PY
[[ ! -e $tmp/noparams.copy/params.bin && -z $(find "$tmp/noparams.copy" -name '*.tmp-*') ]] ||
  fail "no room for params.bin: left $(ls -a "$tmp/noparams.copy")"
echo "ok: no room for params.bin: no summary record: $(grep -m1 "adaqp: error" "$tmp/noparams.log")"
# Its last checkpoint is written after the outputs, so none says the run finished: a resume goes on
# from epoch 1's and completes params.bin and the summary.
[[ -e $tmp/noparams_ckpt/ckpt-000001.bin && ! -e $tmp/noparams_ckpt/ckpt-000002.bin ]] ||
  fail "no room for params.bin: checkpoints $(ls "$tmp/noparams_ckpt")"
train "$tmp/noparams_resume.log" --set "output.dir=$tmp/noparams.copy" --set training.epochs=2 \
  --set model.hidden=1024 --set training.checkpoint_every=1 \
  --set "training.checkpoint_dir=$tmp/noparams_ckpt" --resume ||
  fail "resume after no room for params.bin: $(cat "$tmp/noparams_resume.log")"
python3 - "$tmp/noparams.copy/metrics.jsonl" <<'PY' || fail "completed run's metrics"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert sorted((r["epoch"], r["rank"]) for r in records if "event" not in r) == [
    (e, r) for e in (1, 2) for r in (0, 1)], records
assert records[-1].get("event") == "summary" and records[-1]["first_epoch"] == 2, records[-1]
PY
[[ -s $tmp/noparams.copy/params.bin && -e $tmp/noparams_ckpt/ckpt-000002.bin ]] ||
  fail "the resume did not complete the run: $(ls "$tmp/noparams.copy" "$tmp/noparams_ckpt")"
echo "ok: a run that could not write params.bin is completed by --resume"

# No room for a generated heterogeneous graph: the error says why, and nothing is left behind.
mkdir -p "$tmp/nogen"
rc=0
unshare --mount --propagation private bash -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 90
  "$2" generate --set dataset.synthetic.heterogeneous=true --set dataset.synthetic.num_nodes=20000 \
    --out "$1/g" >"$3" 2>&1
  rc=$?; ls -A "$1" >"$3.left"; exit $rc' _ "$tmp/nogen" "$ADAQP_BIN" "$tmp/nogen.log" || rc=$?
((rc != 90)) || fail "could not mount a tmpfs"
if ((rc != 1)) || ! grep -q "adaqp: error: .*write failed: No space left on device" "$tmp/nogen.log" ||
  [[ -s $tmp/nogen.log.left ]]; then
  fail "no room for a generated graph (exit $rc): $(cat "$tmp/nogen.log") left: $(cat "$tmp/nogen.log.left")"
fi
echo "ok: no room for a generated graph: $(grep -m1 "adaqp: error" "$tmp/nogen.log")"

# Room for the records and params.bin but not for output.predictions' file (20,000 nodes: about
# 160 KiB): the job fails naming predictions.npy, and metrics.jsonl has no summary record.
mkdir -p "$tmp/nopred" "$tmp/nopred.copy"
rc=0
unshare --mount --propagation private bash "$tmp/full.sh" "$tmp/nopred" 64k "$tmp/nopred.log" \
  "$ADAQP_BIN" train "${job[@]}" --set "output.dir=$tmp/nopred" --set training.epochs=2 \
  --set dataset.synthetic.num_nodes=20000 --set "partition.dir=$tmp/part-20000" \
  --set output.predictions=true || rc=$?
((rc != 90)) || fail "could not mount a tmpfs"
if ((rc == 0 || rc == 124)) || ! grep -q "adaqp: error.*predictions.npy.*No space left on device" \
  "$tmp/nopred.log"; then
  fail "no room for predictions.npy (exit $rc): $(cat "$tmp/nopred.log")"
fi
python3 - "$tmp/nopred.copy/metrics.jsonl" <<'PY' || fail "no room for predictions.npy: metrics"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert len([r for r in records if "event" not in r]) == 4, records
assert not any(r.get("event") == "summary" for r in records), "a summary for a run that failed"
PY
[[ -s $tmp/nopred.copy/params.bin && ! -e $tmp/nopred.copy/predictions.npy &&
  -z $(find "$tmp/nopred.copy" -name '*.tmp-*') ]] ||
  fail "no room for predictions.npy: left $(ls -a "$tmp/nopred.copy")"
echo "ok: no room for predictions.npy: no summary record: $(grep -m1 "adaqp: error" "$tmp/nopred.log")"

# hold_lock DIR: another process takes DIR's run lock, as a live job does; its pid in $holder.
hold_lock() {
  rm -f "$tmp/lock.ready"
  python3 - "$1/.adaqp.lock" "$tmp/lock.ready" <<'PY' &
import fcntl, sys, time
f = open(sys.argv[1], "w")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)
PY
  holder=$!
  for _ in $(seq 100); do [[ -e $tmp/lock.ready ]] && break; sleep 0.1; done
}

# A lock held by another process: the second job writes nothing.
mkdir -p "$tmp/locked"
echo previous >"$tmp/locked/config.yaml"
hold_lock "$tmp/locked"
rc=0
train "$tmp/locked.log" --set "output.dir=$tmp/locked" --set training.epochs=2 \
  --set "partition.dir=$tmp/locked/partition" || rc=$?
kill "$holder"
wait "$holder" 2>/dev/null || true
if ((rc == 0 || rc == 124)) || [[ $(grep -c "adaqp: error" "$tmp/locked.log") != 1 ]] ||
  ! grep -q "output.dir = $tmp/locked: another job is writing into it (process $holder holds" \
    "$tmp/locked.log" || [[ $(cat "$tmp/locked/config.yaml") != previous ]] ||
  [[ -e $tmp/locked/metrics.jsonl || -e $tmp/locked/partition ]]; then
  fail "locked output.dir (exit $rc): $(cat "$tmp/locked.log")"
fi
echo "ok: a locked output.dir: $(grep "adaqp: error" "$tmp/locked.log")"

# The same for a checkpoint directory outside output.dir that another job writes into (two jobs
# given one training.checkpoint_dir would prune and replace each other's checkpoints).
mkdir -p "$tmp/shared_ckpt"
hold_lock "$tmp/shared_ckpt"
rc=0
train "$tmp/ckpt_locked.log" --set "output.dir=$tmp/ckpt_locked" --set training.epochs=2 \
  --set training.checkpoint_every=1 --set "training.checkpoint_dir=$tmp/shared_ckpt" || rc=$?
kill "$holder"
wait "$holder" 2>/dev/null || true
if ((rc == 0 || rc == 124)) || [[ $(grep -c "adaqp: error" "$tmp/ckpt_locked.log") != 1 ]] ||
  ! grep -q "training.checkpoint_dir = $tmp/shared_ckpt: another job is writing into it (process $holder holds" \
    "$tmp/ckpt_locked.log" || [[ -e $tmp/ckpt_locked/metrics.jsonl ]] ||
  [[ -n $(find "$tmp/shared_ckpt" -name 'ckpt-*') ]]; then
  fail "locked checkpoint_dir (exit $rc): $(cat "$tmp/ckpt_locked.log")"
fi
echo "ok: a locked checkpoint_dir: $(grep "adaqp: error" "$tmp/ckpt_locked.log")"

# Two jobs into one output.dir that neither found at start-up: the first to start is stopped
# (SIGSTOP) while it partitions, before it can lock the directory it has yet to make; the second
# trains into it and ends. The first then stops at its lock, naming what the other wrote, which
# stays as it was (found by a review, 2026-12-06: it trained over the other's output).
rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" \
  --set dataset.synthetic.num_nodes=200000 --set "partition.dir=$tmp/race_part" \
  --set "output.dir=$tmp/race" --set training.epochs=2 --set output.log_level=info \
  >"$tmp/race_first.log" 2>&1 &
first=$!
for _ in $(seq 1500); do
  grep -q "partitioning the dataset" "$tmp/race_first.log" && break
  sleep 0.02
done
mapfile -t first_pids < <(pgrep -f -- "output.dir=$tmp/race ")
((${#first_pids[@]} > 0)) || fail "the first job is not running: $(cat "$tmp/race_first.log")"
kill -STOP "${first_pids[@]}"
[[ ! -e $tmp/race ]] || fail "the first job made output.dir before it was stopped"
train "$tmp/race_second.log" --set "output.dir=$tmp/race" --set training.epochs=2 ||
  fail "second job: $(cat "$tmp/race_second.log")"
cp "$tmp/race/metrics.jsonl" "$tmp/race.metrics.jsonl"
kill -CONT "${first_pids[@]}"
wait "$first" || rc=$?
if ((rc == 0 || rc == 124)) || [[ $(grep -c "adaqp: error" "$tmp/race_first.log") != 1 ]] ||
  ! grep -q "output.dir = $tmp/race: another job wrote config.yaml there after this one started" \
    "$tmp/race_first.log" || ! cmp -s "$tmp/race/metrics.jsonl" "$tmp/race.metrics.jsonl"; then
  fail "two jobs racing for one output.dir (exit $rc): $(cat "$tmp/race_first.log")"
fi
echo "ok: two jobs racing for one output.dir: $(grep "adaqp: error" "$tmp/race_first.log")"

# The same race where the first job makes output.dir itself, as the default partition.dir's parent:
# it locks output.dir as it makes it, so the second job, started once the first is stopped while it
# partitions, stops at the lock and writes nothing, and the first trains (found by a review,
# 2026-12-07: the second took the lock, the first stopped at it, and the second then stopped at the
# first's partition: neither trained).
rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" \
  --set dataset.synthetic.num_nodes=200000 --set partition.dir= --set "output.dir=$tmp/race2" \
  --set training.epochs=2 \
  --set output.log_level=info >"$tmp/race2_first.log" 2>&1 &
first=$!
for _ in $(seq 1500); do
  [[ -e $tmp/race2/.adaqp.lock ]] && break
  sleep 0.02
done
mapfile -t first_pids < <(pgrep -f -- "output.dir=$tmp/race2 ")
((${#first_pids[@]} > 0)) || fail "the first job is not running: $(cat "$tmp/race2_first.log")"
kill -STOP "${first_pids[@]}"
[[ -e $tmp/race2/.adaqp.lock ]] ||
  fail "the first job did not lock the output.dir it made: $(ls -a "$tmp/race2" 2>&1)"
[[ ! -e $tmp/race2/partition ]] ||
  fail "the first job locked output.dir only once its partition was made: $(cat "$tmp/race2_first.log")"
rc2=0
train "$tmp/race2_second.log" --set partition.dir= --set "output.dir=$tmp/race2" \
  --set training.epochs=2 || rc2=$?
listing=$(ls -A "$tmp/race2")
kill -CONT "${first_pids[@]}"
wait "$first" || rc=$?
if ((rc != 0 || rc2 == 0 || rc2 == 124)) ||
  [[ $(grep -c "adaqp: error" "$tmp/race2_second.log") != 1 ]] ||
  ! grep -q "output.dir = $tmp/race2: another job is writing into it" "$tmp/race2_second.log" ||
  grep -qE '^(config.yaml|metrics.jsonl)$' <<<"$listing" || [[ ! -s $tmp/race2/metrics.jsonl ]]; then
  fail "two jobs racing for an output.dir the first makes (exit $rc, second $rc2, output.dir held
$listing while the first was stopped): $(cat "$tmp/race2_first.log" "$tmp/race2_second.log")"
fi
echo "ok: two jobs racing for an output.dir the first makes: $(grep "adaqp: error" "$tmp/race2_second.log")"

# A dangling symbolic link as the checkpoint directory: refused before anything is written.
ln -s "$tmp/nowhere/ckpt" "$tmp/dangling"
rc=0
train "$tmp/dangling.log" --set "output.dir=$tmp/dangling_out" --set training.epochs=2 \
  --set training.checkpoint_every=1 --set "training.checkpoint_dir=$tmp/dangling" || rc=$?
if ((rc == 0 || rc == 124)) || [[ -e $tmp/dangling_out ]] || ! grep -q "adaqp: error: training.checkpoint_dir = $tmp/dangling: cannot create directory: $tmp/dangling is a symbolic link to $tmp/nowhere/ckpt, which does not exist" \
  "$tmp/dangling.log"; then
  fail "dangling checkpoint_dir (exit $rc): $(cat "$tmp/dangling.log")"
fi
echo "ok: a dangling checkpoint_dir: $(grep "adaqp: error" "$tmp/dangling.log")"

# Trains 3 epochs into $tmp/first with FILE bind-mounted read-only onto itself in a private mount
# namespace (a mount point can be neither written nor removed nor renamed over), into LOG; sets rc.
train_over_mount() { # FILE LOG
  rc=0
  # shellcheck disable=SC2016  # expanded by the namespace's shell
  unshare --mount --propagation private bash -c 'mount --bind -o ro "$1" "$1" || exit 90; shift
    timeout 120 mpirun --oversubscribe -np 2 "$@"' _ "$1" "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$tmp/first" --set training.epochs=3 >"$2" 2>&1 || rc=$?
  ((rc != 90)) || fail "could not bind-mount $1"
}

# An earlier run's metrics.jsonl that refuses writing: the earlier config.yaml stays.
cp "$tmp/first/config.yaml" "$tmp/first.config.yaml"
train_over_mount "$tmp/first/metrics.jsonl" "$tmp/readonly.log"
if ((rc == 0 || rc == 124)) || ! grep -q \
  "adaqp: error: $tmp/first/metrics.jsonl: cannot be written: Read-only file system" \
  "$tmp/readonly.log" || ! cmp -s "$tmp/first/config.yaml" "$tmp/first.config.yaml"; then
  fail "read-only metrics.jsonl (exit $rc): $(cat "$tmp/readonly.log")"
fi
echo "ok: a metrics.jsonl that refuses writing: $(grep "adaqp: error" "$tmp/readonly.log")"

# An earlier run's metrics.jsonl that is not a file: a FIFO (opening it to append would wait for a
# reader for ever) or a directory stops the job at start-up, naming it; config.yaml stays.
for kind in fifo directory; do
  rm -rf "$tmp/notfile"
  mkdir "$tmp/notfile"
  cp "$tmp/first.config.yaml" "$tmp/notfile/config.yaml"
  if [[ $kind == fifo ]]; then mkfifo "$tmp/notfile/metrics.jsonl"; else mkdir "$tmp/notfile/metrics.jsonl"; fi
  rc=0
  train "$tmp/notfile.log" --set "output.dir=$tmp/notfile" --set training.epochs=2 || rc=$?
  if ((rc == 0 || rc == 124)) || ! grep -q \
    "adaqp: error: $tmp/notfile/metrics.jsonl: is not a regular file" "$tmp/notfile.log" ||
    ! cmp -s "$tmp/notfile/config.yaml" "$tmp/first.config.yaml"; then
    fail "metrics.jsonl as a $kind (exit $rc): $(cat "$tmp/notfile.log")"
  fi
done
echo "ok: a metrics.jsonl that is a FIFO or a directory: $(grep "adaqp: error" "$tmp/notfile.log")"

# An earlier run's params.bin that cannot be replaced: the job stops before config.yaml and
# metrics.jsonl change, naming the file, instead of failing after training.
cp "$tmp/first/metrics.jsonl" "$tmp/first.metrics.jsonl"
cp "$tmp/first/params.bin" "$tmp/first.params.bin"
train_over_mount "$tmp/first/params.bin" "$tmp/params.log"
if ((rc == 0 || rc == 124)) || ! grep -q \
  "adaqp: error: $tmp/first/params.bin: cannot remove: Device or resource busy" "$tmp/params.log" ||
  ! cmp -s "$tmp/first/config.yaml" "$tmp/first.config.yaml" ||
  ! cmp -s "$tmp/first/metrics.jsonl" "$tmp/first.metrics.jsonl" ||
  ! cmp -s "$tmp/first/params.bin" "$tmp/first.params.bin"; then
  fail "params.bin that cannot be replaced (exit $rc): $(cat "$tmp/params.log")"
fi
echo "ok: a params.bin that cannot be replaced: $(grep "adaqp: error" "$tmp/params.log")"
