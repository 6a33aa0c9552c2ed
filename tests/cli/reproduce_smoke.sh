#!/usr/bin/env bash
# The reproduction harness (benchmarks/reproduce/reproduce.py, profile smoke) end to end: the
# bandwidth calibration, the four modes on the virtual cluster, the accuracy runs, and its outputs:
# - it exits 0, which it does only when every run's measured bytes per epoch equal the volume
#   predicted from the partition (adaqp info) and the message widths;
# - the CSV files hold one row per mode and bandwidth (throughput) and per variant and seed
#   (accuracy), Vanilla's speed-up is 1, results.md has every table, the plots are PNG images;
# - none of the virtual clusters it started left a namespace behind;
# - stopped by SIGTERM (a time limit) once its throughput phase began, it stops its run, exits
#   non-zero and still writes results.md, marked unfinished, and no process or namespace remains;
# - run again into the same --out and failing, it leaves no earlier report behind.
# Skips (exit 77) where network namespaces cannot be created, except when CI=true and running as
# root, where it must run.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?path of the source tree}"

# shellcheck source=tests/cli/lib/netns.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
require_netns
command -v gnuplot >/dev/null || skip_or_fail "gnuplot is not installed (scripts/setup.sh)"

out=$tmp/out
python3 "$ADAQP_SOURCE_DIR/benchmarks/reproduce/reproduce.py" --profile smoke --bin "$ADAQP_BIN" \
  --shared "$tmp/no-datasets" --out "$out" --timeout 300 >"$tmp/run.log" 2>&1 ||
  { cat "$tmp/run.log" >&2; fail "reproduce.py exited non-zero"; }
echo "ok: reproduce.py --profile smoke finished ($(grep -c '^\[reproduce\]   .*: [0-9.]* s$' "$tmp/run.log") runs)"

for f in throughput.csv accuracy.csv accuracy_summary.csv accuracy_curves.csv bits.csv \
  calibration.csv meta.json results.md; do
  [[ -s $out/$f ]] || fail "$f missing or empty"
done

python3 - "$out" <<'PY' || fail "output tables"
import csv, sys
out = sys.argv[1]
tp = list(csv.DictReader(open(out + "/throughput.csv")))
modes = ["vanilla", "adaqp-q", "adaqp-p", "adaqp"]
bws = sorted({int(r["bandwidth_mbit"]) for r in tp})
assert len(bws) == 2, bws
assert sorted((int(r["bandwidth_mbit"]), r["mode"]) for r in tp) == \
    sorted((b, m) for b in bws for m in modes), [(r["bandwidth_mbit"], r["mode"]) for r in tp]
for r in tp:
    assert r["bytes_match"] == "True", r
    assert float(r["epochs_per_s"]) > 0, r
    if r["mode"] == "vanilla":
        assert float(r["speedup"]) == 1.0, r
    else:
        # Quantized modes send fewer bytes than full precision; overlap alone the same.
        v = next(x for x in tp if x["mode"] == "vanilla" and x["bandwidth_mbit"] == r["bandwidth_mbit"])
        quantized = r["mode"] in ("adaqp-q", "adaqp")
        assert (float(r["bytes_per_epoch"]) < float(v["bytes_per_epoch"])) == quantized, r
acc = list(csv.DictReader(open(out + "/accuracy.csv")))
variants = sorted({r["variant"] for r in acc})
assert variants == sorted(modes + ["uniform-2", "uniform-4", "uniform-8", "random", "adaptive"]), variants
assert all(sum(1 for r in acc if r["variant"] == v) == 2 for v in variants)
assert all(0 < float(r["test_acc"]) <= 1 for r in acc)
md = open(out + "/results.md").read()
for title in ("## Bandwidth", "## Throughput", "## Goal", "## Time breakdown", "## Accuracy",
              "## Bit-width histograms", "## Plots"):
    assert title in md, title
print("ok: 8 throughput rows with matching bytes, 9 accuracy variants x 2 seeds, results.md complete")
PY

for png in accuracy_vs_time_generated breakdown_generated bit_widths; do
  [[ $(head -c 8 "$out/$png.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "$png.png is not a PNG image"
  grep -q "($png.png)" "$out/results.md" || fail "results.md does not show $png.png"
done
echo "ok: plots are PNG images, shown in results.md"

prefixes=$(sed -n 's/^\[vcluster\] prefix \(adaqp-[0-9]*\),.*/\1/p' "$out"/runs/*.log | sort -u)
[[ -n $prefixes ]] || fail "no virtual cluster was started"
for p in $prefixes; do
  if ip netns list | grep -q "^$p-"; then fail "namespaces of $p left behind"; fi
done
echo "ok: $(wc -w <<<"$prefixes") virtual clusters, nothing left behind"

stopped=$tmp/stopped
python3 "$ADAQP_SOURCE_DIR/benchmarks/reproduce/reproduce.py" --profile smoke --bin "$ADAQP_BIN" \
  --shared "$tmp/no-datasets" --out "$stopped" --timeout 300 >"$tmp/stopped.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -q "phase 2/3" "$tmp/stopped.log" && break
  sleep 0.2
done
grep -q "phase 2/3" "$tmp/stopped.log" || {
  cat "$tmp/stopped.log"
  tail -n 20 "$stopped"/runs/*.log 2>/dev/null
  fail "the second reproduction never reached phase 2 in 120 s"
}
sleep 1
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
((status != 0)) || fail "a stopped reproduction exited 0"
grep -q '^- \*\*Unfinished\*\*: stopped by SIGTERM' "$stopped/results.md" ||
  fail "results.md of the stopped reproduction is not marked unfinished"
if pgrep -f "$stopped/" >/dev/null; then fail "a run of the stopped reproduction still runs"; fi
prefixes=$(sed -n 's/^\[vcluster\] prefix \(adaqp-[0-9]*\),.*/\1/p' "$stopped"/runs/*.log | sort -u)
for p in $prefixes; do
  if ip netns list | grep -q "^$p-"; then fail "namespaces of $p left behind after the stop"; fi
done
echo "ok: stopped in its throughput phase: exit $status, results.md marked unfinished, nothing left"

# Run again into the first run's --out with a binary whose training fails: the reproduction stops
# non-zero, and the first run's report, whose runs the new run replaces, is gone rather than left
# claiming results (found by a review, 2026-12-06).
cat >"$tmp/failing-adaqp" <<SH
#!/usr/bin/env bash
[[ \$1 != train ]] || { echo "simulated training failure" >&2; exit 3; }
exec "$ADAQP_BIN" "\$@"
SH
chmod +x "$tmp/failing-adaqp"
status=0
python3 "$ADAQP_SOURCE_DIR/benchmarks/reproduce/reproduce.py" --profile smoke \
  --bin "$tmp/failing-adaqp" --shared "$tmp/no-datasets" --out "$out" --timeout 300 \
  >"$tmp/failed.log" 2>&1 || status=$?
((status != 0)) || fail "a reproduction whose training failed exited 0"
for f in results.md meta.json throughput.csv; do
  [[ ! -e $out/$f ]] || fail "the failed rerun left the earlier $f"
done
echo "ok: a failed rerun into the same --out leaves no earlier report"
