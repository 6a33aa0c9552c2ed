#!/usr/bin/env bash
# Rank 0 stopped (SIGSTOP: a frozen process, as a host cut off the network looks to its peers)
# while it partitions the dataset alone, at `train` start-up and in `adaqp partition` under
# mpirun: the other ranks, waiting for it as long as it shows signs of life (comm/solo_work.h),
# end the job non-zero within communication.timeout_s (3 s) and a few seconds, with one message
# naming rank 0 and what it was doing, and no partition is left behind (before, they waited 24
# hours). The same job stopped whole for twice that bound while rank 0 partitions, then continued
# (a scheduler suspending and resuming it), trains to the end.
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
# pids_once_partitioning NAME: every process of the job, rank 0's first, once rank 0 has loaded
# the dataset (it partitions it for about a second next; the others wait for it by then).
pids_once_partitioning() {
  for _ in $(seq 3000); do
    grep -q "loaded synthetic" "$tmp/$1.log" && break
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
# still_partitioning NAME: fails unless rank 0, just stopped, had not yet written the partition
# (stopped later, the test would test nothing).
still_partitioning() {
  sleep 0.1
  ! grep -q "built and wrote" "$tmp/$1.log" ||
    fail "$1: rank 0 was stopped only after it had partitioned: $(cat "$tmp/$1.log")"
}

# stalled NAME ARGS...: stops rank 0 while it partitions; the job must end within 20 s, non-zero,
# naming rank 0's silence, and leave no partition.
stalled() {
  local name=$1 pids rc=0
  shift
  start "$name" "$@"
  read -r -a pids < <(pids_once_partitioning "$name")
  kill -STOP "${pids[0]}"
  local stopped=$SECONDS
  still_partitioning "$name"
  wait "$runner" || rc=$?
  runner=""
  kill -KILL "${pids[0]}" 2>/dev/null || true
  local waited=$((SECONDS - stopped))
  if ((rc == 0 || rc == 124 || waited > 20)) ||
    (($(grep -c "adaqp: error" "$tmp/$name.log") != 1)) || ! grep -Eq "adaqp: error: rank [12] heard nothing from rank 0 for 3 s \(communication.timeout_s\) while rank 0 was partitioning the dataset: rank 0 stalled, or its host cannot be reached" \
      "$tmp/$name.log"; then
    fail "$name: rank 0 stopped while partitioning: exit $rc after $waited s: $(cat "$tmp/$name.log")"
  fi
  [[ ! -e $tmp/part/meta.yaml ]] || fail "$name: a partition was left behind"
  echo "ok: $name: exit $rc after $waited s: $(grep -m1 "heard nothing" "$tmp/$name.log")"
}

stalled train_stalled train --set "output.dir=$tmp/out"
stalled partition_stalled partition --out "$tmp/part"

# The whole job stopped for 6 s (twice the bound) while rank 0 partitions, then continued, the
# waiting ranks 1 s before rank 0 (they wake to no sign yet).
start suspended train --set "output.dir=$tmp/suspended"
read -r -a pids < <(pids_once_partitioning suspended)
kill -STOP "${pids[@]}"
still_partitioning suspended
sleep 6
kill -CONT "${pids[@]:1}"
sleep 1
kill -CONT "${pids[0]}"
rc=0
wait "$runner" || rc=$?
runner=""
((rc == 0)) && grep -q "summary:" "$tmp/suspended.log" ||
  fail "the job suspended for 6 s while partitioning did not go on (exit $rc): $(cat "$tmp/suspended.log")"
echo "ok: suspended 6 s while partitioning, then trained to the end"
