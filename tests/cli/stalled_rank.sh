#!/usr/bin/env bash
# Rank 0 stopped (SIGSTOP: a frozen process, as a host cut off the network looks to its peers)
# while it partitions the dataset alone, at `train` start-up and in `adaqp partition` under
# mpirun: the other ranks, waiting for it as long as it shows signs of life (comm/solo_work.h),
# end the job non-zero within communication.timeout_s (3 s) and a few seconds, with one message
# naming rank 0 and what it was doing, and no partition is left behind (before, they waited 24
# hours). Likewise rank 1 stopped while every rank partitions with PT-Scotch (partition.method
# ptscotch), whose own waits have no bound: the others watch every rank's signs of life
# (comm/peer_watch.h) and rank 0 names rank 1 (before, they waited in PT-Scotch until killed); and
# rank 1 stopped later in start-up, once the partition is written (before, the others waited for
# it in MPI's end, silent). The
# same job stopped whole for twice that bound while rank 0 partitions, then continued (a scheduler
# suspending and resuming it), trains to the end; so does a job stopped whole while it trains, its
# ranks then waiting in exchanges and all-reduces (common/wait_bound.h; before, they timed out on
# their wake).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
# shellcheck source=tests/cli/lib/rank_pid.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rank_pid.sh"
runner=""
trap '[[ -n $runner ]] && kill -KILL "$runner" 2>/dev/null; rm -rf "$tmp"' EXIT

# 200k nodes: rank 0 takes seconds to generate and partition them while the others wait.
mapfile -t job < <(synthetic_graph 200000 seed=3; gnn_model 2 16
  set_pairs partition.parts=3 "partition.dir=$tmp/part" training.epochs=2 training.threads=1 \
    training.device=cpu communication.timeout_s=3 output.log_level=info)

# start NAME ARGS...: adaqp ARGS on 3 processes in the background ($runner), log in $tmp/NAME.log.
start() {
  local name=$1
  shift
  timeout 120 mpirun --oversubscribe --bind-to none -np 3 "$ADAQP_BIN" "$@" "${job[@]}" \
    >"$tmp/$name.log" 2>&1 &
  runner=$!
}
# pids_once_partitioning NAME [LINE]: every process of the job, rank 0's first, once the log shows
# LINE (by default: rank 0 has loaded the dataset; it partitions it for about a second next, the
# others wait for it by then).
pids_once_partitioning() {
  for _ in $(seq 3000); do
    grep -q "${2:-loaded synthetic}" "$tmp/$1.log" && break
    kill -0 "$runner" 2>/dev/null || fail "$1 ended before partitioning: $(cat "$tmp/$1.log")"
    sleep 0.01
  done
  local r pids=()
  for r in 0 1 2; do
    pids+=("$(rank_pid "partition.dir=$tmp/part" "$r")")
  done
  [[ -n ${pids[0]} && -n ${pids[1]} && -n ${pids[2]} ]] ||
    fail "$1: processes not found: $(cat "$tmp/$1.log")"
  echo "${pids[@]}"
}
# still_partitioning NAME [LINE]: fails unless the rank just stopped was still partitioning: the
# log lacks LINE (by default: rank 0 has written the partition). Stopped later, the test would test
# nothing.
still_partitioning() {
  sleep 0.1
  ! grep -q "${2:-built and wrote}" "$tmp/$1.log" ||
    fail "$1: the rank was stopped only after it had partitioned: $(cat "$tmp/$1.log")"
}

# stalled NAME RANK MESSAGE ARGS...: stops rank RANK while it partitions (alone for rank 0, with
# PT-Scotch for rank 1); the job must end within 20 s, non-zero, with MESSAGE (a regex) the one
# error, and leave no partition.
stalled() {
  local name=$1 rank=$2 message=$3 pids rc=0 ready=() finished=()
  shift 3
  ((rank == 0)) || ready=("as 3 slices") finished=("ptscotch into")
  start "$name" "$@"
  read -r -a pids < <(pids_once_partitioning "$name" "${ready[@]}")
  ((rank == 0)) || sleep 0.3 # inside PT-Scotch, for about 10 s here
  kill -STOP "${pids[rank]}"
  local stopped=$SECONDS
  still_partitioning "$name" "${finished[@]}"
  wait "$runner" || rc=$?
  runner=""
  kill -KILL "${pids[rank]}" 2>/dev/null || true
  local waited=$((SECONDS - stopped))
  if ((rc == 0 || rc == 124 || waited > 20)) ||
    (($(grep -c "adaqp: error" "$tmp/$name.log") != 1)) ||
    ! grep -Eq "adaqp: error: $message" "$tmp/$name.log"; then
    fail "$name: rank $rank stopped while partitioning: exit $rc after $waited s: $(cat "$tmp/$name.log")"
  fi
  [[ ! -e $tmp/part/meta.yaml ]] || fail "$name: a partition was left behind"
  echo "ok: $name: exit $rc after $waited s: $(grep -m1 "heard nothing" "$tmp/$name.log")"
}

solo="rank [12] heard nothing from rank 0 for 3 s \(communication.timeout_s\) while rank 0 was partitioning the dataset: rank 0 stalled, or its host cannot be reached"
stalled train_stalled 0 "$solo" train --set "output.dir=$tmp/out"
stalled partition_stalled 0 "$solo" partition --out "$tmp/part"
watched="rank 0 heard nothing from rank 1 for 3 s \(communication.timeout_s\) while the ranks were partitioning the dataset with PT-Scotch: rank 1 stalled, or its host cannot be reached"
stalled ptscotch_train_stalled 1 "$watched" train --set "output.dir=$tmp/out" \
  --set partition.method=ptscotch
stalled ptscotch_partition_stalled 1 "$watched" partition --out "$tmp/part" \
  --set partition.method=ptscotch

# Rank 1 stopped once the partition is written (it loads its part, or waits in a start-up step's
# collective): the others' collective times out and the job ends there, with one message (before,
# they waited for rank 1 in MPI's end, silent, until killed).
name=startup_stalled
start "$name" train --set "output.dir=$tmp/out-startup"
read -r -a pids < <(pids_once_partitioning "$name" "wrote partition")
stop_until_ended "${pids[1]}"
if ((rc == 0 || rc == 124 || waited > 20)) ||
  (($(grep -c "adaqp: error" "$tmp/$name.log") != 1)) ||
  ! grep -Eq "adaqp: error.*timed out after 3 s" "$tmp/$name.log"; then
  fail "$name: rank 1 stopped at start-up: exit $rc after $waited s: $(cat "$tmp/$name.log")"
fi
echo "ok: $name: exit $rc after $waited s: $(grep -m1 "adaqp: error" "$tmp/$name.log")"
rm -rf "$tmp/part"

# The whole job stopped for 6 s (twice the bound) while rank 0 partitions, then continued, the
# waiting ranks 1 s before rank 0 (they wake to no sign yet).
# continue_after_6s NAME WHILE PIDS...: the stopped job's processes PIDS (rank 0's first) continued
# 6 s on, the others 1 s before rank 0; the job must then train to the end.
continue_after_6s() {
  local name=$1 while=$2 rc=0
  shift 2
  sleep 6
  kill -CONT "${@:2}"
  sleep 1
  kill -CONT "$1"
  wait "$runner" || rc=$?
  runner=""
  ((rc == 0)) && grep -q "summary:" "$tmp/$name.log" ||
    fail "the job suspended for 6 s $while did not go on (exit $rc): $(cat "$tmp/$name.log")"
}

start suspended train --set "output.dir=$tmp/suspended"
read -r -a pids < <(pids_once_partitioning suspended)
kill -STOP "${pids[@]}"
still_partitioning suspended
continue_after_6s suspended "while partitioning" "${pids[@]}"
echo "ok: suspended 6 s while partitioning, then trained to the end"

# A small job stopped whole for 6 s in the middle of its epochs, mostly waits for each other's
# rows there, then continued the same way: it trains to the end.
mapfile -t small < <(synthetic_graph 3000 seed=3; gnn_model 2 16
  set_pairs communication.mode=vanilla partition.parts=3 "partition.dir=$tmp/small-part" \
    training.epochs=400 training.threads=1 training.device=cpu communication.timeout_s=3 \
    "output.dir=$tmp/training")
# 400 epochs take about 115 s on a loaded 2-core machine (0.28 s each, seen 2026-12-07), stop included.
timeout 300 mpirun --oversubscribe --bind-to none -np 3 "$ADAQP_BIN" train "${small[@]}" \
  >"$tmp/training.log" 2>&1 &
runner=$!
# epochs_recorded: the records of epochs so far (0 before the file exists).
epochs_recorded() {
  local n
  n=$(grep -c '"epoch"' "$tmp/training/metrics.jsonl" 2>/dev/null) || true
  echo "${n:-0}"
}
for _ in $(seq 6000); do
  (($(epochs_recorded) >= 30)) && break
  kill -0 "$runner" 2>/dev/null || fail "the small job ended before its 10th epoch: $(cat "$tmp/training.log")"
  sleep 0.01
done
pids=()
for r in 0 1 2; do pids+=("$(rank_pid "output.dir=$tmp/training" "$r")"); done
[[ -n ${pids[0]} && -n ${pids[1]} && -n ${pids[2]} ]] ||
  fail "the small job's processes not found: $(cat "$tmp/training.log")"
kill -STOP "${pids[@]}"
sleep 0.1
recorded=$(epochs_recorded)
((recorded < 3 * 400)) || fail "the small job was stopped only after its last epoch"
continue_after_6s training "while training" "${pids[@]}"
echo "ok: suspended 6 s after $((recorded / 3)) of 400 epochs, then trained to the end"
