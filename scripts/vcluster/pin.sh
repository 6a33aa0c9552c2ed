#!/usr/bin/env bash
# Runs a rank of scripts/vcluster.sh on its host's CPUs, as on a machine of its own: ranks
# iK..iK+K-1 are host i's (K = ADAQP_VCLUSTER_RANKS_PER_HOST), whose CPUs are the (i+1)-th word of
# ADAQP_VCLUSTER_CPUS. The command keeps this process (exec).
#   pin.sh CMD...
set -euo pipefail
read -ra host_cpus <<<"${ADAQP_VCLUSTER_CPUS:?set by vcluster.sh}"
host=$((${OMPI_COMM_WORLD_RANK:?run by mpirun} / ${ADAQP_VCLUSTER_RANKS_PER_HOST:?set by vcluster.sh}))
exec taskset -c "${host_cpus[host]}" "$@"
