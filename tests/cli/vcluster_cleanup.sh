#!/usr/bin/env bash
# The rate-limited virtual cluster (scripts/vcluster.sh):
# - a 2-host probe at 50mbit succeeds, its data arrive intact, and the measured bandwidth is
#   positive and at most 10% above the shaped rate (unshaped, the veths carry gigabits: so the
#   traffic crossed the shaper);
# - neither that run nor runs interrupted by SIGINT or SIGTERM once every host runs its rank leave
#   anything behind: no namespace with the run's prefix, no process inside the run's namespaces
#   (so the namespaces, with their veths and bridge, are gone), no new device in the root
#   namespace, no temporary directory;
# - without the rights (an unprivileged user) it refuses before creating anything.
# Skips (exit 77) where network namespaces cannot be created, except when CI=true and running as
# root, where it must run.
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?path of the source tree}"
RATE_MBIT=50

# shellcheck source=tests/cli/lib/netns.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
vcluster_probe_test
command -v setpriv >/dev/null ||
  skip_or_fail "setpriv (util-linux) is not installed: the unprivileged check needs it"

root_links() { ip -o link show | awk -F': ' '{ print $2 }' | sort; }
links_before=$(root_links)

# start_run ARGS...: starts vcluster.sh in the background (pid in run_pid, stderr in run.log,
# stdout in run.out) and waits, at most 30 s, until its three namespaces exist; records their
# inode numbers in ns_inodes.
start_run() {
  # Job control on: a background job of a shell without it ignores SIGINT, and a signal ignored
  # when a shell starts cannot be trapped.
  set -m
  bash "$VCLUSTER" "$@" >"$tmp/run.out" 2>"$tmp/run.log" &
  run_pid=$!
  set +m
  ns_inodes=()
  local ns step
  for ((step = 0; step < 300; ++step)); do
    if ip netns list | grep -q "^adaqp-$run_pid-h1"; then break; fi
    kill -0 "$run_pid" 2>/dev/null || fail "vcluster.sh exited before its namespaces existed"
    sleep 0.1
  done
  for ns in "adaqp-$run_pid-sw" "adaqp-$run_pid-h0" "adaqp-$run_pid-h1"; do
    ns_inodes+=("$(stat -L -c %i "/run/netns/$ns")") || fail "namespace $ns was not created"
  done
}

# finish_run: waits, at most 60 s, for the run to end; its exit status in run_rc.
finish_run() {
  local step
  for ((step = 0; step < 600; ++step)); do
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$run_pid" 2>/dev/null && fail "vcluster.sh still running 60 s after it should end"
  run_rc=0
  wait "$run_pid" || run_rc=$?
}

# check_clean NAME: nothing of the last run remains.
check_clean() {
  local name=$1
  if ip netns list | grep -q "^adaqp-$run_pid-"; then
    fail "$name: namespaces left: $(ip netns list | grep "^adaqp-$run_pid-" | tr '\n' ' ')"
  fi
  local inode link
  for inode in "${ns_inodes[@]}"; do
    for link in /proc/[0-9]*/ns/net; do
      if [[ $(readlink "$link" 2>/dev/null) == "net:[$inode]" ]]; then
        fail "$name: process ${link#/proc/} still inside a namespace of the run"
      fi
    done
  done
  [[ $(root_links) == "$links_before" ]] || fail "$name: devices in the root namespace changed"
  local state
  state=$(sed -n 's/.*state dir \(.*\)$/\1/p' "$tmp/run.log")
  [[ -n $state ]] || fail "$name: vcluster.sh did not report its state dir"
  [[ ! -e $state ]] || fail "$name: state dir $state left behind"
  echo "ok: $name: nothing left behind (exit status $run_rc)"
}

# 1. Probe: the measured rate is bounded by the shaper.
start_run --hosts 2 --bandwidth "${RATE_MBIT}mbit" --timeout 120 --probe --probe-bin "$BENCH_LINK" \
  -- --seconds 1 --sizes 262144,1048576
finish_run
((run_rc == 0)) || fail "probe: exit status $run_rc"
summary=$(grep '"benchmark":"vcluster_probe"' "$tmp/run.out") || fail "probe: no summary line"
measured=$(sed -n 's/.*"measured_mbit_per_s":\([0-9.]*\).*/\1/p' <<<"$summary")
[[ $summary == *'"verified":true'* ]] || fail "probe: data corrupted: $summary"
configured=$(sed -n 's/.*"configured_mbit_per_s":\([0-9.]*\).*/\1/p' <<<"$summary")
awk -v c="$configured" -v r="$RATE_MBIT" 'BEGIN { exit !(c == r) }' ||
  fail "probe: vcluster.sh shaped $configured Mbit/s, asked for ${RATE_MBIT}"
awk -v m="$measured" -v r="$RATE_MBIT" 'BEGIN { exit !(m >= 0.8 * r && m <= 1.10 * r) }' ||
  fail "probe: measured $measured Mbit/s outside [0.8, 1.10] x $RATE_MBIT"
echo "ok: probe: measured $measured Mbit/s at a shaped ${RATE_MBIT} Mbit/s"
check_clean probe

# 2. Interrupted runs: the signal arrives once both hosts run their rank (a sleep).
for signal in INT TERM; do
  start_run --hosts 2 --bandwidth "${RATE_MBIT}mbit" --timeout 120 -- sleep 100
  for ((step = 0; step < 600; ++step)); do
    sleeping=0
    for ns in "adaqp-$run_pid-h0" "adaqp-$run_pid-h1"; do
      pids=$(ip netns pids "$ns" 2>/dev/null | paste -sd, -)
      if [[ -n $pids ]] && ps -o comm= -p "$pids" | grep -qx sleep; then
        sleeping=$((sleeping + 1))
      fi
    done
    ((sleeping == 2)) && break
    sleep 0.1
  done
  ((sleeping == 2)) || fail "SIG$signal: the ranks did not start within 60 s"
  kill -s "$signal" "$run_pid"
  finish_run
  expected=143
  [[ $signal == INT ]] && expected=130
  ((run_rc == expected)) || fail "SIG$signal: exit status $run_rc, expected $expected"
  check_clean "SIG$signal"
done

# 3. No rights: an unprivileged user is refused before anything is created.
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups bash "$VCLUSTER" --hosts 2 \
  --bandwidth 10mbit -- true >"$tmp/run.out" 2>"$tmp/nobody.log" || rc=$?
((rc != 0)) || fail "unprivileged: vcluster.sh succeeded"
grep -q "needs root" "$tmp/nobody.log" ||
  fail "unprivileged: no clear message: $(cat "$tmp/nobody.log")"
[[ $(root_links) == "$links_before" ]] || fail "unprivileged: root devices changed"
echo "ok: unprivileged: refused ($(cat "$tmp/nobody.log"))"
run_pid=""
