# shellcheck shell=bash
# Sourced by the CLI tests that train on ../shared/datasets (not a test itself: ctest runs
# tests/cli/*.sh only).

# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

# require_shared_datasets NAME...: ends the calling test (skip_or_fail) when a dataset is missing.
require_shared_datasets() {
  local ds dir
  for ds in "$@"; do
    dir="${ADAQP_SHARED_DATASETS:-}/$ds"
    [[ -d "$dir/raw" ]] && continue
    skip_or_fail "shared dataset $ds missing at '$dir' (set ADAQP_SHARED_DATASETS)"
  done
}
