#!/usr/bin/env bash
# The project's scripts on what users give them:
# - the benchmarks' run.sh take one argument, the work directory: --help prints their opening
#   comment (status 0), another option is refused (status 2), neither made as a directory;
# - benchmarks/scale/run.sh exits non-zero when a training run fails (it used to log the failure
#   and exit 0), and its table holds no row for it;
# - benchmarks/reproduce.sh refuses a bad option before its set-up installs and builds, and
#   benchmarks/links/run.sh and pyg_compare/run.sh a bad setting (a rate, a pair, a count) before
#   their first run;
# - scripts/vcluster.sh refuses a count with a leading zero (bash reads 010 as octal 8) and a rate
#   beyond what tc takes, before it creates anything.
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?path of the source tree}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cd "$tmp"

for script in links pyg_compare scale; do
  run="$ADAQP_SOURCE_DIR/benchmarks/$script/run.sh"
  bash "$run" --help >"$script.help" 2>&1 || fail "$script/run.sh --help: $(cat "$script.help")"
  grep -q "^Usage\|^Writes\|work" "$script.help" || fail "$script/run.sh --help: $(cat "$script.help")"
  rc=0
  bash "$run" --bogus >"$script.bogus" 2>&1 || rc=$?
  ((rc == 2)) && grep -q "unknown option '--bogus'" "$script.bogus" ||
    fail "$script/run.sh --bogus (exit $rc): $(cat "$script.bogus")"
  [[ ! -e --help && ! -e --bogus ]] || fail "$script/run.sh made a directory of an option"
done
echo "ok: the benchmarks' run.sh: --help and an unknown option"
# benchmarks/reproduce.sh checks its options before the set-up installs and builds (it ran
# scripts/setup.sh first, found by a review, 2026-12-06).
for bad in "--profile bogus" "--timeout 0" "--phases nope"; do
  rc=0
  # shellcheck disable=SC2086  # the option and its value, split on purpose
  bash "$ADAQP_SOURCE_DIR/benchmarks/reproduce.sh" $bad >reproduce.out 2>&1 || rc=$?
  ((rc == 2)) && grep -q "reproduce.py: error: " reproduce.out &&
    ! grep -q "^\[setup" reproduce.out ||
    fail "benchmarks/reproduce.sh $bad (exit $rc): $(cat reproduce.out)"
done
echo "ok: benchmarks/reproduce.sh refuses bad options before the set-up"
# refuses_settings SCRIPT SETTINGS...: benchmarks/SCRIPT/run.sh, given each SETTINGS (variables
# separated by ';'), exits 2 with an error before it makes its work directory.
refuses_settings() {
  local script=$1 bad rc settings
  shift
  for bad in "$@"; do
    IFS=';' read -r -a settings <<<"$bad"
    rc=0
    env "${settings[@]}" bash "$ADAQP_SOURCE_DIR/benchmarks/$script/run.sh" "$tmp/$script-bad" \
      >"$script.out" 2>&1 || rc=$?
    ((rc == 2)) && grep -q "error: " "$script.out" && [[ ! -e $tmp/$script-bad ]] ||
      fail "benchmarks/$script/run.sh with $bad (exit $rc): $(cat "$script.out")"
  done
  echo "ok: benchmarks/$script/run.sh refuses bad settings before any run"
}
# Both checked their settings only once runs had begun: a bad last rate ended a sweep midway,
# ROUNDS=abc was a bash error, WARMUP >= EPOCHS a traceback after the first run, PAIRS=foo trained
# adaqp under that label.
refuses_settings links "RATES=shm fastt" ROUNDS=abc ROUNDS=0 "WARMUP=10;EPOCHS=10" WORKERS=x
refuses_settings pyg_compare PAIRS=foo DEVICE=gpu ROUNDS=abc "WARMUP=10;EPOCHS=10" MODELS=gat

# A binary whose training fails: the scale benchmark must say so in its exit status.
cat >failing-adaqp <<EOF
#!/usr/bin/env bash
[[ \$1 != train ]] || { echo "simulated training failure" >&2; exit 3; }
exec "$ADAQP_BIN" "\$@"
EOF
chmod +x failing-adaqp
rc=0
ADAQP_BIN=$tmp/failing-adaqp ADAQP_PYTHON=${ADAQP_PYTHON:-python3} NODES=600 AVG_DEGREE=4 FEAT=8 \
  CLASSES=4 EPOCHS=2 PYG_NODES=0 WORKERS=1 MODELS=gcn \
  bash "$ADAQP_SOURCE_DIR/benchmarks/scale/run.sh" "$tmp/scale" >scale.log 2>&1 || rc=$?
((rc != 0)) && grep -q "1 run(s) failed" scale.log || fail "scale with a failed run (exit $rc): $(cat scale.log)"
(($(grep -c '^| adaqp' "$tmp/scale/results.md") == 0)) || fail "a row for the failed run"
echo "ok: scale/run.sh exits $rc when a run fails"

# vcluster.sh: refused before anything is created (the checks come first, root or not).
for args in "--hosts 010" "--hosts 2 --timeout 09" "--hosts 2 --ranks-per-host 02"; do
  rc=0
  # shellcheck disable=SC2086  # the words of $args are the options
  bash "$ADAQP_SOURCE_DIR/scripts/vcluster.sh" $args --bandwidth 1gbit -- true >vc.log 2>&1 || rc=$?
  ((rc == 2)) && grep -q "error: --.* must be" vc.log || fail "vcluster.sh $args (exit $rc): $(cat vc.log)"
done
rc=0
bash "$ADAQP_SOURCE_DIR/scripts/vcluster.sh" --hosts 2 --bandwidth 99999999999999999999gbit -- true \
  >vc.log 2>&1 || rc=$?
((rc == 2)) && grep -q "from 8kbit to 10000gbit" vc.log || fail "vcluster.sh's huge rate (exit $rc): $(cat vc.log)"
echo "ok: vcluster.sh refuses leading zeros and impossible rates"
echo "script_args: all passed"
