#!/usr/bin/env bash
# Set-up, build, then every test (unit, multi-process over mpirun, CLI end-to-end, fuzz replays,
# format check), then, when run without arguments, the unit tests and fuzz replays of the library
# without libtorch again under ASan + UBSan (scripts/sanitize.sh --core, in build-sanitize, built
# beside the tests).
# Arguments go to ctest (e.g. -R NAME) and skip the sanitizer run.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
"$ADAQP_ROOT/scripts/setup.sh"
# --no-tests=error: a build without tests (a stale cache with tests off) is a failure, not a pass.
# With CI=true (.ci/run) every skip but a GPU test's is a failure (tests/cli/lib/skip.sh,
# tests/support/mpi_main.cpp, tests/support/test_util.h); either way the skips are listed with
# their reasons.
# One test more than cores: about a fifth of the tests' time is waiting (process start-up, files,
# message latency); on the 2-core machine ctest took 488 s at 3 against 546 s at 2.
status=0
# The sanitizer's build runs beside the tests at the lowest priority, on the time they leave the
# cores idle (waits, the last tests); its tests run after them.
if [ "$#" -eq 0 ]; then
  sanitize_log=$(mktemp)
  # In this session (setsid would give it an autogroup of its own, where the kernel's scheduler
  # shares the cores evenly whatever its nice value); an interrupted run stops it and its compilers.
  nice -n 19 "$ADAQP_ROOT/scripts/sanitize.sh" --core --build-only >"$sanitize_log" 2>&1 &
  sanitize_build=$!
  # shellcheck disable=SC2317  # called by the EXIT trap
  kill_tree() {
    local child
    for child in $(pgrep -P "$1"); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
  }
  trap 'kill_tree "$sanitize_build"; rm -f "$sanitize_log"' EXIT
fi
ctest --test-dir "$ADAQP_BUILD_DIR" --output-on-failure --no-tests=error \
  --parallel "$(($(nproc) + 1))" "$@" || status=$?
python3 "$ADAQP_ROOT/scripts/list_skips.py" "$ADAQP_BUILD_DIR"
if [ "$#" -eq 0 ]; then
  if wait "$sanitize_build"; then
    tail -n 1 "$sanitize_log"
    "$ADAQP_ROOT/scripts/sanitize.sh" --core || status=$?
  else
    cat "$sanitize_log"
    status=1
  fi
fi
exit "$status"
