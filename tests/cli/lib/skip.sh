# shellcheck shell=bash
# Sourced by the CLI tests (not a test itself: ctest runs tests/cli/*.sh only).

# skip_or_fail REASON: ends the calling test: a visible skip (exit 77, the SKIP_RETURN_CODE of every
# CLI test in tests/CMakeLists.txt), or a failure (exit 1) when CI=true, where everything a test
# needs must be present (root too). A skipped test never counts as passed.
skip_or_fail() {
  if [[ ${CI:-} == true ]]; then
    echo "FAIL: $1 (CI=true: this test must run)" >&2
    exit 1
  fi
  echo "SKIP: $1"
  exit 77
}
