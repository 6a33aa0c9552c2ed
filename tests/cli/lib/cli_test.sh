# shellcheck shell=bash
# The start of a CLI test, sourced first: strict mode, $ADAQP_BIN required, $PYTHON
# ($ADAQP_PYTHON, else python3), a private $tmp removed on exit, `fail MESSAGE` (ends the test,
# exit 1), skip_or_fail (skip.sh) and `require_numpy`.
set -euo pipefail
: "${ADAQP_BIN:?set ADAQP_BIN to the adaqp binary}"
PYTHON=${ADAQP_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

# require_numpy: ends the test (skip_or_fail) unless $PYTHON imports NumPy.
require_numpy() {
  "$PYTHON" -c 'import numpy' 2>/dev/null ||
    skip_or_fail "$PYTHON has no NumPy (set ADAQP_PYTHON to the venv of scripts/setup.sh)"
}
