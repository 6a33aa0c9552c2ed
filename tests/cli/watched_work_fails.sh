#!/usr/bin/env bash
# A rank failing alone outside a collective step while every rank works together under
# run_watched (src/cli/collective_step.h), as the PT-Scotch start-up does: adaqp_watched_work_fails
# (tests/tools/watched_work_fails.cpp) throws std::bad_alloc on one rank while the others wait for
# it in a barrier, whose bound there is 24 hours. The job must end non-zero within seconds (a rank
# other than 0 reports after kLateReportS, 10 s), on every rank, with one error naming the failing
# rank (before, that rank's MPI_Finalize waited for the others and they for it). Every rank failing
# (as PT-Scotch's errors come) gives one error too, rank 0's. With no rank failing the same work
# ends exit 0: the test's job would otherwise pass for any job that never ends well.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_WATCHED_WORK_FAILS_BIN:?path of the test binary adaqp_watched_work_fails}"

# run NP RANK: the work on NP ranks, RANK failing; sets $rc and $elapsed, log in $tmp/run.log.
run() {
  local start
  start=$(date +%s)
  rc=0
  timeout 120 mpirun --oversubscribe --bind-to none -np "$1" "$ADAQP_WATCHED_WORK_FAILS_BIN" "$2" \
    >"$tmp/run.log" 2>&1 || rc=$?
  elapsed=$(($(date +%s) - start))
}

run 3 -1
if ((rc != 0)) || ! grep -q "every rank finished its work" "$tmp/run.log"; then
  cat "$tmp/run.log"
  fail "the work without a failing rank exited $rc"
fi

for np_rank in "2 1" "3 2" "3 0" "3 all"; do
  read -r np failing <<<"$np_rank"
  run "$np" "$failing"
  rank=${failing/all/0}
  if ((rc == 0 || rc == 124 || elapsed > 30)); then
    cat "$tmp/run.log"
    fail "rank $failing of $np failing: the job exited $rc after $elapsed s"
  fi
  errors=$(grep -c "^adaqp: " "$tmp/run.log" || true)
  if ((errors != 1)) || ! grep -q "^adaqp: error on rank $rank\b.*out of memory" "$tmp/run.log"; then
    cat "$tmp/run.log"
    fail "rank $rank of $np: not one error naming rank $rank ($errors lines)"
  fi
  echo "ok: rank $failing of $np failing ended the job in $elapsed s (exit $rc)"
done
