# shellcheck shell=bash
# expect_failure NAME W PATTERN ARGS...: runs `adaqp train ARGS` on W ranks under mpirun (log in
# $tmp/NAME.log); every rank must exit non-zero, the run must end before the timeout (a hung rank),
# and the output must hold exactly one "adaqp: error" line, which contains PATTERN (a fixed
# string). Needs cli_test.sh's $tmp and $ADAQP_BIN.
expect_failure() {
  local name=$1 w=$2 pattern=$3
  shift 3
  local log="$tmp/$name.log" codes="$tmp/$name.codes"
  local rc=0
  : >"$codes"
  # Each rank records its own exit status (mpirun reports only the first failing one); the inner
  # script expands its variables itself, hence the single quotes.
  # shellcheck disable=SC2016
  timeout 120 mpirun --oversubscribe -np "$w" bash -c \
    '"$0" train "${@:2}"; echo "$OMPI_COMM_WORLD_RANK $?" >>"$1"' "$ADAQP_BIN" "$codes" "$@" \
    >"$log" 2>&1 || rc=$?
  if ((rc == 124)); then
    cat "$log"
    echo "FAIL: $name: timed out (a rank hung)" >&2
    exit 1
  fi
  local ranks nonzero
  ranks=$(wc -l <"$codes")
  nonzero=$(awk '$2 != 0' "$codes" | wc -l)
  if ((ranks != w || nonzero != w)); then
    cat "$log" "$codes"
    echo "FAIL: $name: $nonzero of $w ranks exited non-zero ($ranks reported)" >&2
    exit 1
  fi
  local errors
  errors=$(grep -c "adaqp: error" "$log" || true)
  if ((errors != 1)) || ! grep "adaqp: error" "$log" | grep -qF -- "$pattern"; then
    cat "$log"
    echo "FAIL: $name: expected one 'adaqp: error' line containing '$pattern', got $errors" >&2
    exit 1
  fi
  echo "ok: $name: $(grep "adaqp: error" "$log")"
}
