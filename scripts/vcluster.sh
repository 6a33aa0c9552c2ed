#!/usr/bin/env bash
# A rate-limited virtual cluster on one machine, so that multi-worker runs pay for communication
# the way a real cluster does.
#
#   scripts/vcluster.sh --hosts W [--ranks-per-host K] --bandwidth RATE [--latency DELAY]
#                       [--timeout SECONDS] [--private-dir PATH [--private-store DIR]] -- CMD...
#   scripts/vcluster.sh [--hosts W] [--ranks-per-host K] --bandwidth RATE [--latency DELAY] --probe
#                       [--probe-bin PATH] [-- BENCH_LINK_ARGS...]
#
# Topology. Host i (i = 0..W-1) is the network namespace adaqp-<pid>-h<i> with one interface, vc0,
# address 10.A.B.(i+1)/24 (A.B from this script's pid). vc0 is one end of a veth pair whose other
# end, h<i>, is a port of the bridge br0 in the namespace adaqp-<pid>-sw: a non-blocking switch.
# Nothing is created or changed in the root namespace except the namespace names (/run/netns) and
# a temporary directory.
#
# What is shaped. The egress of both veth ends: vc0 (host -> switch, the host's uplink) and h<i>
# (switch -> host, its downlink), each by one htb class at RATE (burst: 1 ms at RATE, at least
# 16 KiB, with segmentation offload capped at 16 KiB per packet so that no packet exceeds the burst).
# A larger burst let messages below it cross at memory speed on slow links: at 50 Mbit/s the link
# probe fitted 1.4 ns/byte instead of 160 (64 KiB cross in 10 ms at that rate), and the adaptive
# scheme sent more bytes than on a 1 Gbit/s link. So every host has a full-duplex link of RATE in
# each direction, and W-1 senders to one host share its downlink. With DELAY > 0 a netem qdisc under
# the uplink class adds DELAY, so a message between two hosts takes DELAY one way (2 DELAY round
# trip) beyond its transmission time. Nothing inside a host is shaped (with --ranks-per-host K > 1,
# the traffic between its ranks).
# netem needs a kernel with sch_netem.
#
# CMD runs K times per host (--ranks-per-host, default 1) under `mpirun -np W*K` (mpirun inside
# host 0): ranks iK..iK+K-1 on host i (a hostfile of K slots per host, mapped by slot), all in the
# host's namespace. MPI is restricted to TCP over vc0 (pml ob1, btl tcp,self; no UCX), so all
# traffic between hosts crosses the shaped links. With K > 1, the ranks of one host also talk over
# shared memory (btl vader), which is not shaped: the fast links inside a host (its GPUs' NVLink or
# PCIe) beside the slow network between hosts. OpenMPI counts each host's daemon as a node of its
# own, so vader joins only ranks of one host, and each host keeps vader's backing files in its own
# session directory (the hosts share the machine's host name, which names those files). Each host
# runs on cores of its own, as a machine of its own would: its share of this script's CPUs (hosts
# take turns on them where there are more hosts than CPUs), so that a rank's training.threads 0
# takes its host's share, not every core for every host; idle ranks yield the CPU
# (mpi_yield_when_idle) instead of busy-polling. --probe runs benchmarks/bench_link between hosts 0 and 1 (ranks 0 and K) and
# compares the measured bandwidth with RATE (JSON lines on stdout, a summary last); with K > 1 it
# also measures ranks 0 and 1, two ranks of host 0 (the summary's intra_host_* fields).
#
# Private directories. With --private-dir PATH (an existing absolute directory), each host sees a
# folder of its own at PATH (a bind mount in a mount namespace of the host's processes): what host
# i writes there lands in DIR/h<i> (--private-store; default: a folder of the state directory,
# removed on exit; a given DIR is kept, so that a later run finds what an earlier one left), and
# no other host sees it: a cluster without a shared filesystem below PATH. The ranks of one host
# share its folder.
#
# RATE: a number with bit, kbit, mbit or gbit (SI units, as tc). DELAY: a number with us, ms or s
# (default 0). --timeout bounds the MPI run (default 600 s). Everything created is removed on exit,
# on error and on SIGINT/SIGTERM; the exit status is the command's (124 on timeout, 130/143 when
# interrupted). Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); refuses to start otherwise.
set -euo pipefail

# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
# "[vcluster] MESSAGE": tests/cli/reproduce_smoke.sh reads the prefix line of every run's log.
ADAQP_LOG_TIME=0
AGENT="$ADAQP_ROOT/scripts/vcluster/agent.sh"
PRIVATE="$ADAQP_ROOT/scripts/vcluster/private.sh"
PIN="$ADAQP_ROOT/scripts/vcluster/pin.sh"
PREFIX="adaqp-$$"
SWITCH_NS="$PREFIX-sw"
HOST_IF="vc0"
MAX_HOSTS=250
MAX_RANKS=1024

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
}

hosts=""
ranks_per_host=1
bandwidth=""
latency="0ms"
timeout_s=600
probe=0
probe_bin="$ADAQP_BUILD_DIR/benchmarks/bench_link"
private_dir=""
private_store=""

need_value() { (($2 >= 2)) || die "$1 needs a value"; }
while (($#)); do
  case $1 in
    --hosts | --ranks-per-host | --bandwidth | --latency | --timeout | --probe-bin | \
      --private-dir | --private-store)
      need_value "$1" $#
      case $1 in
        --private-dir) private_dir=$2 ;;
        --private-store) private_store=$2 ;;
        --hosts) hosts=$2 ;;
        --ranks-per-host) ranks_per_host=$2 ;;
        --bandwidth) bandwidth=$2 ;;
        --latency) latency=$2 ;;
        --timeout) timeout_s=$2 ;;
        --probe-bin) probe_bin=$2 ;;
      esac
      shift 2
      ;;
    --probe)
      probe=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      break
      ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
cmd=("$@")

# RATE in bits per second (an integer), or empty when malformed.
rate_bits() {
  [[ $1 =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit)$ ]] || return 0
  local scale
  case ${BASH_REMATCH[3]} in
    bit) scale=1 ;;
    kbit) scale=1000 ;;
    mbit) scale=1000000 ;;
    gbit) scale=1000000000 ;;
  esac
  awk -v v="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { printf "%.0f", v * s }'
}

# DELAY in microseconds (an integer), or empty when malformed.
delay_us() {
  [[ $1 =~ ^([0-9]+(\.[0-9]+)?)(us|ms|s)$ ]] || return 0
  local scale
  case ${BASH_REMATCH[3]} in
    us) scale=1 ;;
    ms) scale=1000 ;;
    s) scale=1000000 ;;
  esac
  awk -v v="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { printf "%.0f", v * s }'
}

if [[ ! $ranks_per_host =~ ^[1-9][0-9]{0,8}$ ]] || ((ranks_per_host > MAX_RANKS)); then
  die "--ranks-per-host must be an integer in [1, $MAX_RANKS], got '$ranks_per_host'"
fi
# The probe's peers: rank K on host 1 (the shaped link) and, with K > 1, rank 1 on host 0.
inter_peer=$ranks_per_host
intra_peer=""
((ranks_per_host == 1)) || intra_peer=1
if ((probe)); then
  hosts=${hosts:-2}
  cmd=("$probe_bin" --peer "$inter_peer${intra_peer:+,$intra_peer}" "${cmd[@]}")
fi
# Integers without a leading zero: bash reads 010 as octal 8.
if [[ ! $hosts =~ ^[1-9][0-9]{0,8}$ ]] || ((hosts > MAX_HOSTS)); then
  die "--hosts must be an integer in [1, $MAX_HOSTS], got '$hosts'"
fi
((hosts * ranks_per_host <= MAX_RANKS)) ||
  die "--hosts x --ranks-per-host must be at most $MAX_RANKS ranks, got $hosts x $ranks_per_host"
((!probe || hosts >= 2)) || die "--probe needs --hosts of at least 2"
[[ -n $bandwidth ]] || die "--bandwidth is required (e.g. 100mbit)"
rate=$(rate_bits "$bandwidth")
# tc takes rates below 2^64 bit/s (and 10 Tbit/s is beyond any link to shape).
if [[ -z $rate ]] || ((${#rate} > 14 || rate < 8000)); then
  die "--bandwidth must be a number with bit, kbit, mbit or gbit, from 8kbit to 10000gbit; got" \
    "'$bandwidth'"
fi
delay=$(delay_us "$latency")
[[ -n $delay ]] || die "--latency must be a number with us, ms or s; got '$latency'"
if [[ ! $timeout_s =~ ^[1-9][0-9]{0,8}$ ]]; then
  die "--timeout must be a positive integer (seconds), got '$timeout_s'"
fi
((${#cmd[@]})) || die "no command given: put it after -- (or use --probe)"
if [[ -n $private_dir ]]; then
  [[ $private_dir == /* && -d $private_dir && $private_dir != *[[:space:]]* ]] ||
    die "--private-dir must be an existing absolute directory without spaces, got '$private_dir'"
  [[ -z $private_store || ($private_store == /* && $private_store != *[[:space:]]*) ]] ||
    die "--private-store must be an absolute path without spaces, got '$private_store'"
else
  [[ -z $private_store ]] || die "--private-store needs --private-dir"
fi
((!probe)) || [[ -x $probe_bin ]] ||
  die "probe program '$probe_bin' not found: build the bench_link target or pass --probe-bin"
[[ $AGENT != *[[:space:]]* ]] || die "the repository path must not contain spaces: $AGENT"

# Rights and kernel support, checked before anything is created.
check_support() {
  local tool
  for tool in ip tc mpirun timeout unshare awk mount taskset; do
    command -v "$tool" >/dev/null || die "'$tool' not found in PATH"
  done
  local caps
  caps=$(awk '/^CapEff:/ { print $2 }' "/proc/$$/status")
  if (((16#$caps >> 12 & 1) == 0 || (16#$caps >> 21 & 1) == 0)); then
    die "needs root: CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces (uid $EUID)"
  fi
  unshare --net tc qdisc add dev lo root handle 1: htb default 1 2>/dev/null ||
    die "cannot create a network namespace with an htb qdisc (unshare --net / sch_htb)"
  if ((delay > 0)); then
    unshare --net tc qdisc add dev lo root netem delay 1ms 2>/dev/null ||
      die "--latency needs the netem qdisc, which this kernel lacks (sch_netem); use --latency 0"
  fi
  if ip netns list | grep -q "^$PREFIX-"; then
    die "namespaces named $PREFIX-* already exist (left by a killed run?):" \
      "remove them with ip netns del"
  fi
}
check_support

created_ns=()
tmpdir=""
child=""

# shellcheck disable=SC2317  # namespace_pids and cleanup run from the EXIT trap
# Processes still inside our namespaces (ranks, orteds, mpirun), one pid a line.
namespace_pids() {
  local ns
  for ns in "${created_ns[@]}"; do ip netns pids "$ns" 2>/dev/null || true; done
}

# shellcheck disable=SC2317
cleanup() {
  local rc=$?
  # A second Ctrl-C or TERM while cleaning up must not leave the namespaces behind.
  trap - EXIT
  trap '' INT TERM HUP
  set +e
  if [[ -n $child ]]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  local pids step
  for ((step = 0; step < 50; ++step)); do
    mapfile -t pids < <(namespace_pids)
    ((${#pids[@]})) || break
    if ((step == 0)); then
      kill -TERM "${pids[@]}" 2>/dev/null
    elif ((step == 30)); then
      kill -KILL "${pids[@]}" 2>/dev/null
    fi
    sleep 0.1
  done
  local i
  for ((i = ${#created_ns[@]} - 1; i >= 0; --i)); do
    [[ -e /run/netns/${created_ns[i]} ]] || continue
    ip netns del "${created_ns[i]}" || log "could not delete namespace ${created_ns[i]}"
  done
  [[ -n $tmpdir ]] && rm -rf "$tmpdir"
  log "removed ${#created_ns[@]} namespaces (with their veths and bridge) and $tmpdir"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted (SIGINT)"; exit 130' INT
trap 'log "interrupted (SIGTERM)"; exit 143' TERM

# Listed before it exists: a signal that arrives while `ip netns add` runs must not leave it out
# of the cleanup (which skips names that were never created).
add_namespace() {
  created_ns+=("$1")
  ip netns add "$1" || die "ip netns add $1 failed: no permission to create network namespaces?"
}

# Root htb qdisc with one class at RATE on device $2 of namespace $1, netem DELAY under it if $3.
shape() {
  local ns=$1 dev=$2 with_delay=$3
  local burst=$((rate / 8 / 1000 > 16384 ? rate / 8 / 1000 : 16384))  # 1 ms at RATE, >= 16 KiB
  ip -n "$ns" link set dev "$dev" gso_max_size 16384
  tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 1
  tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "${rate}bit" ceil "${rate}bit" \
    burst "$burst" cburst "$burst" quantum 65536
  if ((with_delay && delay > 0)); then
    tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: netem delay "${delay}us" limit 100000
  fi
}

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/adaqp-vcluster.XXXXXX")
log "prefix $PREFIX, state dir $tmpdir"
subnet="10.$(($$ >> 8 & 255)).$(($$ & 255))"
add_namespace "$SWITCH_NS"
ip -n "$SWITCH_NS" link add br0 type bridge
ip -n "$SWITCH_NS" link set br0 up
hostfile="$tmpdir/hostfile"
: >"$hostfile"
for ((i = 0; i < hosts; ++i)); do
  ns="$PREFIX-h$i"
  add_namespace "$ns"
  ip -n "$ns" link add "$HOST_IF" type veth peer name "h$i" netns "$SWITCH_NS"
  ip -n "$ns" addr add "$subnet.$((i + 1))/24" dev "$HOST_IF"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "$HOST_IF" up
  ip -n "$SWITCH_NS" link set "h$i" master br0 up
  shape "$ns" "$HOST_IF" 1
  shape "$SWITCH_NS" "h$i" 0
  echo "$ns slots=$ranks_per_host" >>"$hostfile"
done
log "$hosts hosts of $ranks_per_host ranks on $subnet.0/24, each link $bandwidth each way," \
  "one-way delay $latency"
# This script's CPUs, one a line (taskset's list: "0-3,8,10-11").
own_cpus() {
  local part parts
  IFS=, read -ra parts <<<"$(taskset -cp $$ | sed 's/.*: //')"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}
mapfile -t cpus < <(own_cpus)
((${#cpus[@]} > 0)) || die "no CPUs found in this process's affinity ($(taskset -cp $$ 2>&1))"
host_cpus=()
for ((i = 0; i < hosts; ++i)); do
  if ((hosts >= ${#cpus[@]})); then
    host_cpus+=("${cpus[i % ${#cpus[@]}]}")
  else
    share=("${cpus[@]:i * ${#cpus[@]} / hosts:(i + 1) * ${#cpus[@]} / hosts - i * ${#cpus[@]} / hosts}")
    host_cpus+=("$(IFS=,; echo "${share[*]}")")
  fi
done
# Read by every rank's scripts/vcluster/pin.sh: host i's CPUs are the (i+1)-th word. (mpirun and
# the daemons stay unpinned: mpirun pinned to one CPU lost the race to set its daemons' process
# groups, a warning at every launch.)
export ADAQP_VCLUSTER_CPUS="${host_cpus[*]}" ADAQP_VCLUSTER_RANKS_PER_HOST="$ranks_per_host"
log "CPUs per host: ${host_cpus[*]}"

# Read by the agent (scripts/vcluster/agent.sh) for every host's daemon.
export ADAQP_VCLUSTER_PRIVATE_DIR="$private_dir"
if [[ -n $private_dir ]]; then
  private_store=${private_store:-$tmpdir/private}
  for ((i = 0; i < hosts; ++i)); do mkdir -p "$private_store/h$i"; done
  export ADAQP_VCLUSTER_PRIVATE_STORE="$private_store"
  log "private $private_dir per host, stored in $private_store/h<i>"
fi
# The agent gives each host's daemon a session directory of its own below this one. A base set in
# the environment (ctest sets one per test) would reach the daemons as a command-line option, which
# outranks the agent's: the hosts would share one directory again.
export ADAQP_VCLUSTER_STATE="$tmpdir"
unset OMPI_MCA_orte_tmpdir_base
# Shared memory only between the ranks of one host: with one rank per host there is none to use.
btl=tcp,self
((ranks_per_host == 1)) || btl=vader,tcp,self
# orte_leave_session_attached: the daemons stay children of the agent, so a daemon that dies is an
# error of mpirun at once (daemonized, it left mpirun waiting for ever). rtc_hwloc_vmhole none:
# the daemons do not map the topology into shared memory at a guessed address, which now and then
# landed on their stack (a segfault in hwloc_shmem_topology_write, about 1 launch in 25 here).
mpi_args=(-np $((hosts * ranks_per_host)) --hostfile "$hostfile" --map-by slot --oversubscribe
  --bind-to none
  --mca plm_rsh_agent "$AGENT" --mca plm_rsh_no_tree_spawn 1
  --mca orte_leave_session_attached 1 --mca rtc_hwloc_vmhole none
  --mca pml ob1 --mca btl "$btl" --mca osc ^ucx --mca mpi_yield_when_idle 1
  --mca btl_tcp_if_include "$HOST_IF" --mca oob_tcp_if_include "$HOST_IF")
# The command's output: this script's stdout, or a file the probe reads afterwards.
out="$tmpdir/probe.out"
if ((probe)); then exec 3>"$out"; else exec 3>&1; fi
log "running (timeout ${timeout_s}s): ${cmd[*]}"
timeout --kill-after=10 "$timeout_s" \
  ip netns exec "$PREFIX-h0" "$PRIVATE" "$PREFIX-h0" mpirun "${mpi_args[@]}" "$PIN" "${cmd[@]}" >&3 &
child=$!
rc=0
wait "$child" || rc=$?
child=""
exec 3>&-
if ((rc == 124)); then
  log "timed out after ${timeout_s}s"
elif ((rc != 0)); then
  log "command failed with exit status $rc"
fi

if ((probe)); then
  cat "$out"
  if ((rc == 0)); then
    # The largest FIELD of the lines on rank 0's link to PEER (latency: one line, one value).
    probe_max() {
      grep "\"peer\":$1," "$out" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2 | sort -g | tail -n 1
    }
    measured=$(probe_max "$inter_peer" mbit_per_s || true)
    rtt=$(probe_max "$inter_peer" half_rtt_us_median || true)
    verified=true
    grep -q '"verified":false' "$out" && verified=false
    [[ -n $measured && -n $rtt ]] || die "probe printed no measurement"
    summary=$(awk -v c="$rate" -v m="$measured" -v r="$rtt" -v v="$verified" -v h="$hosts" \
      'BEGIN { printf "{\"benchmark\":\"vcluster_probe\",\"hosts\":%d," \
        "\"configured_mbit_per_s\":%.2f,\"measured_mbit_per_s\":%.2f,\"ratio\":%.4f," \
        "\"half_rtt_us_median\":%.1f,\"verified\":%s", h, c / 1e6, m, m * 1e6 / c, r, v }')
    intra=""
    if [[ -n $intra_peer ]]; then
      intra_measured=$(probe_max "$intra_peer" mbit_per_s)
      intra_rtt=$(probe_max "$intra_peer" half_rtt_us_median)
      [[ -n $intra_measured && -n $intra_rtt ]] || die "probe printed no intra-host measurement"
      summary+=$(awk -v k="$ranks_per_host" -v m="$intra_measured" -v r="$intra_rtt" \
        'BEGIN { printf ",\"ranks_per_host\":%d,\"intra_host_mbit_per_s\":%.2f," \
          "\"intra_host_half_rtt_us_median\":%.1f", k, m, r }')
      intra="; inside a host $intra_measured Mbit/s, half round trip $intra_rtt us"
    fi
    echo "$summary}"
    [[ $verified == true ]] || rc=1
    log "probe: measured $measured Mbit/s vs configured $(awk -v c="$rate" \
      'BEGIN { printf "%.2f", c / 1e6 }') Mbit/s; half round trip ${rtt} us$intra;" \
      "data intact: $verified"
  fi
fi
exit "$rc"
