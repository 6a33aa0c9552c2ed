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
