# shellcheck shell=bash
# Sourced by the CLI tests that train on ../shared/datasets (not a test itself: ctest runs
# tests/cli/*.sh only).

# require_shared_datasets NAME...: ends the calling test when a dataset is missing: a visible skip
# (exit 0), or a failure (exit 1) when CI=true, where the datasets must be present.
require_shared_datasets() {
  local ds dir
  for ds in "$@"; do
    dir="${ADAQP_SHARED_DATASETS:-}/$ds"
    [[ -d "$dir/raw" ]] && continue
    if [[ "${CI:-}" == "true" ]]; then
      echo "FAIL: shared dataset $ds missing at '$dir'" >&2
      exit 1
    fi
    echo "skip: shared dataset $ds not found (set ADAQP_SHARED_DATASETS)"
    exit 0
  done
}
