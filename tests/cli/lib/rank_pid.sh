# shellcheck shell=bash
# rank_pid PATTERN RANK: the process id of the job's rank RANK, an adaqp process ($ADAQP_BIN)
# whose command line matches PATTERN (pgrep -f) and whose environment says OMPI_COMM_WORLD_RANK=RANK;
# nothing when there is none.
rank_pid() {
  local pid
  for pid in $(pgrep -f -- "$1"); do
    if [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$(readlink -f "$ADAQP_BIN")" ]] &&
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$pid"
      return
    fi
  done
}
