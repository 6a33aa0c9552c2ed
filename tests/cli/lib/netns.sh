# shellcheck shell=bash
# Sourced by the CLI tests that start virtual clusters (not a test itself: ctest runs
# tests/cli/*.sh only).

# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

# require_netns: ends the calling test (skip_or_fail, a failure only under CI=true as root) unless
# it may create network namespaces.
require_netns() {
  ((EUID == 0)) ||
    skip_or_fail "not root: network namespaces need CAP_NET_ADMIN/CAP_SYS_ADMIN" root
  if ! ip netns add "adaqp-$$-check" 2>/dev/null; then
    skip_or_fail "'ip netns add' is not permitted here" root
  fi
  ip netns del "adaqp-$$-check"
}
