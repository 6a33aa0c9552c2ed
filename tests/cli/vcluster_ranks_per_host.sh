#!/usr/bin/env bash
# A virtual cluster of 2 hosts with 2 ranks each (scripts/vcluster.sh --ranks-per-host 2) at 50mbit:
# - placement: ranks 0 and 1 run in one network namespace, ranks 2 and 3 in another, each host on
#   CPUs of its own, and with --private-dir ranks 0 and 1 write into host 0's folder, ranks 2 and 3
#   into host 1's;
# - speeds: the probe's link between ranks 0 and 1 (one host) is more than 10x the shaped rate, the
#   one between ranks 0 and 2 (two hosts) within 20% of it, and the data arrive intact;
# - transports: OpenMPI sends over shared memory (btl vader) between ranks of one host only, and
#   over TCP between hosts (its btl selection, logged with btl_base_verbose);
# - values other than an integer >= 1 are refused (exit 2, a message naming the option) before
#   anything is created, and no run leaves a namespace or its state directory behind.
# One rank per host (the default) is vcluster_cleanup's and vcluster_private_dirs' case.
# Skips (exit 77) where network namespaces cannot be created, except when CI=true (a failure).
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?path of the source tree}"
RATE_MBIT=50

# shellcheck source=tests/cli/lib/netns.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
vcluster_probe_test

# cluster ARGS...: vcluster.sh on 2 hosts of 2 ranks (stdout in run.out, stderr in run.log); its
# exit status in run_rc; fails if it left its namespaces or its state directory.
cluster() {
  bash "$VCLUSTER" --hosts 2 --ranks-per-host 2 --bandwidth "${RATE_MBIT}mbit" --timeout 60 "$@" \
    >"$tmp/run.out" 2>"$tmp/run.log" &
  run_pid=$!
  run_rc=0
  wait "$run_pid" || run_rc=$?
  if ip netns list | grep -q "^adaqp-$run_pid-"; then
    fail "namespaces left: $(ip netns list | grep "^adaqp-$run_pid-" | tr '\n' ' ')"
  fi
  local state
  state=$(sed -n 's/.*state dir \(.*\)$/\1/p' "$tmp/run.log")
  [[ -n $state && ! -e $state ]] || fail "state dir '$state' left behind (or not reported)"
  run_pid=""
}

# 1. Bad values: refused before anything is created.
for bad in 0 x; do
  rc=0
  bash "$VCLUSTER" --hosts 2 --ranks-per-host "$bad" --bandwidth 10mbit -- true \
    >/dev/null 2>"$tmp/bad.log" || rc=$?
  if ((rc != 2)) || ! grep -q -- "--ranks-per-host must be an integer" "$tmp/bad.log"; then
    fail "--ranks-per-host $bad: exit $rc, '$(cat "$tmp/bad.log")'"
  fi
  echo "ok: --ranks-per-host $bad refused: $(cat "$tmp/bad.log")"
done

# 2. Placement: each rank prints its rank, network namespace and CPUs, and leaves a file in the
# private folder of its host.
mkdir "$tmp/private"
# shellcheck disable=SC2016  # expanded by each rank's shell
cluster --private-dir "$tmp/private" --private-store "$tmp/store" -- sh -c '
  echo "placement $OMPI_COMM_WORLD_RANK $(readlink /proc/self/ns/net)"
  echo "cpus $OMPI_COMM_WORLD_RANK $(taskset -cp $$ | sed "s/.*: //")"
  : >"$0/rank-$OMPI_COMM_WORLD_RANK"' "$tmp/private"
((run_rc == 0)) || fail "placement run: exit status $run_rc"
declare -A ns
while read -r _ rank net; do ns[$rank]=$net; done < <(grep '^placement ' "$tmp/run.out")
((${#ns[@]} == 4)) || fail "placement: ${#ns[@]} ranks reported, not 4: $(cat "$tmp/run.out")"
own=$(readlink /proc/self/ns/net)
[[ ${ns[0]} == "${ns[1]}" && ${ns[2]} == "${ns[3]}" && ${ns[0]} != "${ns[2]}" &&
  ${ns[0]} != "$own" && ${ns[2]} != "$own" ]] ||
  fail "placement: ranks 0..3 in ${ns[0]} ${ns[1]} ${ns[2]} ${ns[3]} (this test: $own)"
for h in 0 1; do
  found=$(cd "$tmp/store/h$h" && echo rank-*)
  [[ $found == "rank-$((2 * h)) rank-$((2 * h + 1))" ]] ||
    fail "placement: host $h's private folder holds '$found'"
done
[[ -z $(ls -A "$tmp/private") ]] || fail "placement: a rank wrote outside its host's folder"
echo "ok: placement: ranks 0,1 in ${ns[0]}, ranks 2,3 in ${ns[2]}, each host's folder its own"
# Each host on CPUs of its own: the ranks of a host share its CPUs, and with at least as many CPUs
# as hosts no CPU is two hosts'.
declare -A cpus
while read -r _ rank list; do cpus[$rank]=$list; done < <(grep '^cpus ' "$tmp/run.out")
[[ ${cpus[0]} == "${cpus[1]}" && ${cpus[2]} == "${cpus[3]}" ]] ||
  fail "CPUs: ranks 0..3 on ${cpus[0]} ${cpus[1]} ${cpus[2]} ${cpus[3]}"
# (nproc would count OMP_NUM_THREADS, which ctest sets.)
own_cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
if ((own_cpus >= 2)); then
  [[ ${cpus[0]} != "${cpus[2]}" ]] || fail "CPUs: both hosts on ${cpus[0]} with $own_cpus CPUs here"
fi
echo "ok: CPUs: host 0 on ${cpus[0]}, host 1 on ${cpus[2]}"

# 3. Speeds and transports: the probe measures ranks 0-2 (the shaped link) and 0-1 (one host).
OMPI_MCA_btl_base_verbose=100 cluster --probe --probe-bin "$BENCH_LINK" -- \
  --seconds 1 --sizes 262144,1048576
((run_rc == 0)) || fail "probe: exit status $run_rc"
summary=$(grep '"benchmark":"vcluster_probe"' "$tmp/run.out") || fail "probe: no summary line"
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$summary"; }
configured=$(field configured_mbit_per_s)
inter=$(field measured_mbit_per_s)
intra=$(field intra_host_mbit_per_s)
[[ $summary == *'"verified":true'* && -n $configured && -n $inter && -n $intra ]] ||
  fail "probe: data corrupted or fields missing: $summary"
# The shaper's rate as vcluster.sh parsed it is the one asked for, and the measured one is within
# 20% of the rate asked for (the ratio computed here, not vcluster.sh's).
awk -v c="$configured" -v r="$RATE_MBIT" 'BEGIN { exit !(c == r) }' ||
  fail "probe: vcluster.sh shaped $configured Mbit/s, asked for ${RATE_MBIT}"
ratio=$(awk -v m="$inter" -v r="$RATE_MBIT" 'BEGIN { printf "%.3f", m / r }')
awk -v q="$ratio" 'BEGIN { exit !(q >= 0.8 && q <= 1.2) }' ||
  fail "probe: between hosts $inter Mbit/s, ratio $ratio to ${RATE_MBIT} Mbit/s outside [0.8, 1.2]"
awk -v m="$intra" -v r="$RATE_MBIT" 'BEGIN { exit !(m > 10 * r) }' ||
  fail "probe: inside a host only $intra Mbit/s, not above 10 x ${RATE_MBIT} Mbit/s"
echo "ok: probe: between hosts $inter Mbit/s (ratio $ratio), inside a host $intra Mbit/s"

# OpenMPI's btl choices, as "PID BTL RANK" (`[host:PID] mca: bml: Using BTL btl for send to
# [[JOB,1],RANK] on node ...`): each process's own rank from its self line, then the btl it chose
# for every peer.
choices=$(sed -n 's/^\[[^:]*:\([0-9]*\)\] mca: bml: Using \([a-z]*\) btl for send to '\
'\[\[[0-9]*,[0-9]*\],\([0-9]*\)\].*/\1 \2 \3/p' "$tmp/run.log")
declare -A rank_of
while read -r pid rank; do
  rank_of[$pid]=$rank
done < <(awk '$2 == "self" { print $1, $3 }' <<<"$choices")
((${#rank_of[@]} == 4)) || fail "transports: no btl selection logged for 4 ranks"
chosen=()
while read -r pid btl peer; do
  from=${rank_of[$pid]:-}
  [[ -n $from ]] || fail "transports: process $pid chose a btl but logged no rank"
  same_host=$((from / 2 == peer / 2))
  [[ ($btl == vader && same_host -eq 1) || ($btl == tcp && same_host -eq 0) ]] ||
    fail "transports: rank $from sends to rank $peer over $btl"
  chosen+=("$from-$peer:$btl")
done < <(awk '$2 != "self"' <<<"$choices")
[[ " ${chosen[*]} " == *" 0-1:vader "* && " ${chosen[*]} " == *" 0-2:tcp "* ]] ||
  fail "transports: rank 0 did not use vader to rank 1 and tcp to rank 2: ${chosen[*]}"
echo "ok: transports: ${chosen[*]}"
echo "vcluster_ranks_per_host: all passed"
