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
# All hosts share this machine's /tmp and host name: daemons creating OpenMPI's session directories
# under the same /tmp/ompi.<host name>.<uid> at once race on mkdir ("File exists", about 1 launch
# in 40 under load). A separate base per host is what separate machines would have.
session="${ADAQP_VCLUSTER_STATE:?set by vcluster.sh}/session-$host"
mkdir -p "$session"
# The same goes for the shared-memory files of the ranks of one host (btl vader, --ranks-per-host):
# named after host name, job and local rank, in /dev/shm the two hosts' local rank 0 would map one
# file (a segfault in vader's receive path); in the host's own directory each host has its own.
# With --private-dir, the daemon (and the ranks it starts) in the host's own mount namespace.
exec ip netns exec "$host" "$(dirname "${BASH_SOURCE[0]}")/private.sh" "$host" \
  env OMPI_MCA_orte_tmpdir_base="$session" OMPI_MCA_btl_vader_backing_directory="$session" \
  /bin/sh -c "$*"
