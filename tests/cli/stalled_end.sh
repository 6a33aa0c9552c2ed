#!/usr/bin/env bash
# One rank of a 2-rank job frozen (SIGSTOP, as a host cut off the network looks to its peers) at a
# chosen MPI call by the preloaded adaqp_stall_shim (tests/tools/stall_shim.cpp), where no test
# could time a kill -STOP:
# - at its first send of the link probe (train/link_probe.h): rank 0 ends the job non-zero with
#   one error naming the probe's exchange, within 1.1 times communication.timeout_s and the few
#   seconds its cancelled transfers are waited for (before, twice the timeout: the probe polled for
#   the whole timeout, then waited as long again);
# - entering MPI_Finalize, after the job's last collective: rank 0, its outputs written, ends
#   non-zero within the timeout with one error naming MPI_Finalize (before, it waited there
#   forever, silent).
# - rank 0, not frozen but slow to write its outputs (predictions.npy renamed into place 1.5 times
#   the timeout late, as a slow disk would): the job ends 0 with every output (before, the others,
#   done, timed out in MPI_Finalize and their exit ended rank 0 mid-write).
# The same job without a frozen rank ends 0 (the shim changes nothing else).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
: "${ADAQP_STALL_SHIM:?path of the test library adaqp_stall_shim}"
runner=""
trap '[[ -n $runner ]] && kill -KILL "$runner" 2>/dev/null; pkill -KILL -f -- "$tmp/" || true; rm -rf "$tmp"' EXIT

timeout_s=4
mapfile -t job < <(synthetic_graph 3000 seed=3; gnn_model 2 16
  set_pairs partition.parts=2 "partition.dir=$tmp/part" training.epochs=3 training.threads=1 \
    training.device=cpu communication.mode=adaqp "communication.timeout_s=$timeout_s" \
    output.log_level=info)
"$ADAQP_BIN" partition "${job[@]}" >"$tmp/partition.log" 2>&1 ||
  fail "partitioning failed: $(cat "$tmp/partition.log")"

# frozen NAME AT [RANK [ARGS...]]: the job with rank RANK (1) frozen at AT (ADAQP_STALL_AT; "" for
# none), ARGS added. Sets rc and waited (seconds from the freeze to the job's end, 0 without one),
# log in $tmp/NAME.log.
frozen() {
  local name=$1 at=$2 rank=${3:-1} log=$tmp/$1.log
  shift $(($# < 3 ? $# : 3))
  timeout 120 mpirun --oversubscribe --bind-to none -np 2 -x "LD_PRELOAD=$ADAQP_STALL_SHIM" \
    -x "ADAQP_STALL_RANK=$rank" -x "ADAQP_STALL_AT=$at" \
    "$ADAQP_BIN" train "${job[@]}" --set "output.dir=$tmp/$name" "$@" >"$log" 2>&1 &
  runner=$!
  local stopped=""
  while kill -0 "$runner" 2>/dev/null; do
    [[ -z $stopped ]] && grep -q "^stall_shim: rank $rank stops" "$log" && stopped=$(date +%s.%N)
    sleep 0.02
  done
  rc=0
  wait "$runner" || rc=$?
  runner=""
  [[ ! $at =~ ^(isend|finalize) || -n $stopped ]] ||
    fail "$name: rank $rank never reached $at: $(cat "$log")"
  waited=$("$PYTHON" -c "import sys; print(round($(date +%s.%N) - ${stopped:-0}, 2) if '$at' else 0)")
}

frozen unfrozen ""
((rc == 0)) && grep -q "summary:" "$tmp/unfrozen.log" ||
  fail "the job without a frozen rank exited $rc: $(cat "$tmp/unfrozen.log")"

# ended_within NAME LIMIT MESSAGE: the frozen job ended non-zero (not by timeout(1)) within LIMIT
# seconds of the freeze, with one error, matching MESSAGE (a regex).
ended_within() {
  local name=$1 limit=$2 message=$3 log=$tmp/$1.log
  if ((rc == 0 || rc == 124)) || "$PYTHON" -c "import sys; sys.exit($waited <= $limit)" ||
    (($(grep -c "^adaqp: " "$log") != 1)) || ! grep -Eq "^adaqp: error.*$message" "$log"; then
    fail "$name: exit $rc, $waited s after rank 1 froze (at most $limit s): $(cat "$log")"
  fi
  echo "ok: $name: exit $rc, $waited s after the freeze: $(grep "^adaqp: " "$log")"
}

frozen probe isend:32762
ended_within probe 6.5 "halo exchange \(tag 32762\) timed out after $timeout_s s on rank 0"

frozen finalize finalize
ended_within finalize 6.5 "MPI_Finalize on rank 0 .*still waits .* after $timeout_s s"
grep -q "summary:" "$tmp/finalize.log" || fail "finalize: rank 0 ended before its summary"

frozen slow_disk "rename:predictions.npy:$((timeout_s * 3 / 2))" 0 --set output.predictions=true
if ((rc != 0)) || ! grep -q "^stall_shim: rank 0 waits" "$tmp/slow_disk.log" ||
  [[ ! -s $tmp/slow_disk/predictions.npy ]] || ! grep -q '"event": *"summary"' "$tmp/slow_disk/metrics.jsonl"; then
  fail "slow_disk: exit $rc: $(cat "$tmp/slow_disk.log")"
fi
echo "ok: slow_disk: exit 0, predictions.npy and the summary written"
