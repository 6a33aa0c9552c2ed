#!/usr/bin/env bash
# Set-up, build, then every test (unit, multi-process over mpirun, CLI end-to-end, format check).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/setup.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --no-tests=error: a build without tests (a stale cache with tests off) is a failure, not a pass.
ctest --test-dir "${ADAQP_BUILD_DIR:-$ROOT/build}" --output-on-failure --no-tests=error \
  --parallel "$(nproc)" "$@"
