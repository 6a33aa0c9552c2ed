# shellcheck shell=bash
# rank_pid PATTERN RANK: the process id of the job's rank RANK, an adaqp process ($ADAQP_BIN)
# whose command line matches PATTERN (pgrep -f) and whose environment says OMPI_COMM_WORLD_RANK=RANK;
# nothing when there is none. (No pipe into grep -q: under pipefail, a writer that grep -q left
# behind dies of SIGPIPE and the match reads as a miss; an environment of more than 4 KiB is
# written in two pieces.)
rank_pid() {
  local pid
  for pid in $(pgrep -f -- "$1"); do
    if [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$(readlink -f "$ADAQP_BIN")" ]] &&
      grep -qxz "OMPI_COMM_WORLD_RANK=$2" "/proc/$pid/environ" 2>/dev/null; then
      echo "$pid"
      return
    fi
  done
}

# stop_until_ended PID: stops process PID (SIGSTOP: a frozen rank, as a host cut off the network
# looks to its peers), waits for the job $runner to end, then kills PID. Sets rc (the job's exit
# status) and waited (seconds from the stop to the end), and clears runner.
stop_until_ended() {
  kill -STOP "$1"
  local stopped=$SECONDS
  rc=0
  wait "$runner" || rc=$?
  runner=""
  kill -KILL "$1" 2>/dev/null || true
  waited=$((SECONDS - stopped))
}
