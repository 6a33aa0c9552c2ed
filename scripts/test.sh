#!/usr/bin/env bash
# Set-up, build, then every test (unit, multi-process over mpirun, CLI end-to-end, fuzz replays,
# format check), then, when run without arguments, the unit tests and fuzz replays of the library
# without libtorch again under ASan + UBSan (scripts/sanitize.sh --core, in build-sanitize).
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
ctest --test-dir "$ADAQP_BUILD_DIR" --output-on-failure --no-tests=error \
  --parallel "$(($(nproc) + 1))" "$@" || status=$?
python3 "$ADAQP_ROOT/scripts/ctest_report.py" skips "$ADAQP_BUILD_DIR"
if [ "$#" -eq 0 ]; then
  "$ADAQP_ROOT/scripts/sanitize.sh" --core || status=$?
fi
# Last, so that a log cut to its head and tail (a CI summary) still names what failed and why.
python3 "$ADAQP_ROOT/scripts/ctest_report.py" failures "$ADAQP_BUILD_DIR"
exit "$status"
