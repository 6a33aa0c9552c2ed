# shellcheck shell=bash
# Sourced by the CLI tests that start virtual clusters (not a test itself: ctest runs
# tests/cli/*.sh only).

# skip_or_fail REASON: ends the calling test: a visible skip (exit 0), or a failure (exit 1) when
# CI=true and running as root, where everything the test needs must be present.
skip_or_fail() {
  if [[ ${CI:-} == true ]] && ((EUID == 0)); then
    echo "FAIL: $1 (CI=true as root: this test must run)" >&2
    exit 1
  fi
  echo "SKIP: $1"
  exit 0
}

# require_netns: ends the calling test (skip_or_fail) unless it may create network namespaces.
require_netns() {
  ((EUID == 0)) || skip_or_fail "not root: network namespaces need CAP_NET_ADMIN/CAP_SYS_ADMIN"
  if ! ip netns add "adaqp-$$-check" 2>/dev/null; then
    skip_or_fail "'ip netns add' is not permitted here"
  fi
  ip netns del "adaqp-$$-check"
}
