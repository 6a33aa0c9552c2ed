# shellcheck shell=bash
# Sourced by the CLI tests that start virtual clusters (not a test itself: ctest runs
# tests/cli/*.sh only).

# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

# require_netns: ends the calling test (skip_or_fail, a failure under CI=true) unless
# it may create network namespaces.
require_netns() {
  ((EUID == 0)) ||
    skip_or_fail "not root: network namespaces need CAP_NET_ADMIN/CAP_SYS_ADMIN"
  if ! ip netns add "adaqp-$$-check" 2>/dev/null; then
    skip_or_fail "'ip netns add' is not permitted here"
  fi
  ip netns del "adaqp-$$-check"
}

# vcluster_probe_test: the set-up of the tests that run bench_link on virtual clusters: VCLUSTER and
# BENCH_LINK (skip_or_fail where it is not built, or where namespaces cannot be made), a temporary
# directory $tmp removed on exit together with the run whose pid is in $run_pid (when still
# running), and fail MESSAGE, which also prints $tmp/run.log.
# shellcheck disable=SC2034  # VCLUSTER and BENCH_LINK are for the sourcing test
vcluster_probe_test() {
  VCLUSTER="$ADAQP_SOURCE_DIR/scripts/vcluster.sh"
  BENCH_LINK="$(dirname "$(dirname "$ADAQP_BIN")")/benchmarks/bench_link"
  require_netns
  [[ -x $BENCH_LINK ]] || skip_or_fail "$BENCH_LINK is not built (ADAQP_BUILD_BENCHMARKS=OFF?)"
  tmp=$(mktemp -d)
  run_pid=""
  trap vcluster_probe_cleanup EXIT
}

# shellcheck disable=SC2317  # runs from the EXIT trap
vcluster_probe_cleanup() {
  if [[ -n $run_pid ]] && kill -0 "$run_pid" 2>/dev/null; then kill -TERM "$run_pid"; fi
  rm -rf "$tmp"
}

fail() {
  echo "FAIL: $*" >&2
  [[ -f $tmp/run.log ]] && cat "$tmp/run.log" >&2
  exit 1
}
