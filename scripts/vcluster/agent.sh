#!/usr/bin/env bash
# OpenMPI's remote-shell agent for scripts/vcluster.sh: where mpirun would call `ssh HOST CMD...`
# it calls this script, which runs CMD (an orted command line, shell-quoted as for ssh) inside the
# network namespace named HOST. Only namespaces of a virtual cluster (adaqp-<pid>-h<i>) are served.
set -euo pipefail
if (($# < 2)); then
  echo "[vcluster] agent: usage: agent.sh HOST COMMAND..." >&2
  exit 2
fi
host=$1
shift
if [[ ! $host =~ ^adaqp-[0-9]+-h[0-9]+$ ]]; then
  echo "[vcluster] agent: '$host' is not a virtual cluster host" >&2
  exit 2
fi
exec ip netns exec "$host" /bin/sh -c "$*"
