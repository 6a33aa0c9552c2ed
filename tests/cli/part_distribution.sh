#!/usr/bin/env bash
# Parts sent from rank 0 (partition.distribute, partition/obtain_part.h), 3 workers on one
# machine:
# (Quantized at a uniform 4 bits: the adaptive widths follow measured times, so runs differ.)
# - scatter: ranks 1 and 2 receive their parts; the cached files are byte-identical to the
#   partition's, the logged bytes are their sizes, and the run's losses and parameters equal the
#   run that read the shared directory, exactly;
# - a rerun reads both parts from the cache and moves nothing;
# - a corrupted cached part is dropped and fetched again (only that one), and a temporary file
#   left by a killed transfer is removed;
# - a part damaged in the partition directory fails the job with one message naming that file
#   (not the receiver's copy, which is removed);
# - a part rank 0 cannot read fails the job on every rank with one message naming the file, no
#   hang, and leaves nothing in that rank's cache folder.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
LIB="$(dirname "${BASH_SOURCE[0]}")/lib"

mapfile -t job < <(synthetic_graph 3000 seed=5; gnn_model 2 16
  set_pairs partition.parts=3 training.epochs=4 training.threads=1 training.device=cpu \
    communication.mode=quant communication.scheme=uniform communication.bits=4 \
    "partition.dir=$tmp/partition" "partition.local_dir=$tmp/cache" communication.timeout_s=20)
train() {  # train NAME [--set ...]: output in $tmp/NAME, log in $tmp/NAME.log
  local name=$1
  shift
  timeout 300 mpirun --oversubscribe -np 3 "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$tmp/$name" "$@" >"$tmp/$name.log" 2>&1
}

train shared || { cat "$tmp/shared.log"; fail "shared run"; }
grep -q "3 of 3 ranks read their part where they are, 0 receive" "$tmp/shared.log" ||
  { cat "$tmp/shared.log"; fail "the shared run did not read every part from the directory"; }

# Scatter: ranks 1 and 2 receive their parts.
train scatter --set partition.distribute=scatter || { cat "$tmp/scatter.log"; fail "scatter"; }
cache=$(echo "$tmp"/cache/partition-*)
[[ -d $cache ]] || fail "no cache folder in $tmp/cache"
cmp "$tmp/partition/meta.yaml" "$cache/meta.yaml" || fail "cached meta.yaml differs"
[[ ! -e $cache/part-0 ]] || fail "rank 0 cached its own part"
for r in 1 2; do
  cmp "$tmp/partition/part-$r/part.bin" "$cache/part-$r/part.bin" ||
    fail "cached part $r differs from the partition's"
  bytes=$(stat -c %s "$tmp/partition/part-$r/part.bin")
  mib=$(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1048576 }')
  grep -q "sent part $r ($mib MiB)" "$tmp/scatter.log" ||
    { cat "$tmp/scatter.log"; fail "rank 0 did not log part $r's size ($mib MiB)"; }
done
total=$(($(stat -c %s "$tmp/partition/part-1/part.bin") + $(stat -c %s "$tmp/partition/part-2/part.bin")))
grep -q "sent 2 parts, $(awk -v b="$total" 'BEGIN { printf "%.2f", b / 1048576 }') MiB" \
  "$tmp/scatter.log" || { cat "$tmp/scatter.log"; fail "total bytes not logged"; }
python3 "$LIB/compare_runs.py" losses "$tmp/shared" "$tmp/scatter" 0 --params 0 ||
  fail "scatter run differs from the shared run"

# Rerun: both parts from the cache.
train cached --set partition.distribute=scatter || { cat "$tmp/cached.log"; fail "cached run"; }
{ grep -q "3 of 3 ranks read their part where they are, 0 receive" "$tmp/cached.log" &&
  (($(grep -c "part read from the host-local cache" "$tmp/cached.log") == 2)) &&
  ! grep -q "sent part" "$tmp/cached.log"; } ||
  { cat "$tmp/cached.log"; fail "the rerun did not use the cache"; }
python3 "$LIB/compare_runs.py" losses "$tmp/shared" "$tmp/cached" 0 --params 0 ||
  fail "cached run differs from the shared run"

# A corrupted cached part and a stale temporary file.
size=$(stat -c %s "$cache/part-1/part.bin")
printf '\xff\xff\xff\xff' | dd of="$cache/part-1/part.bin" bs=1 seek=$((size / 2)) conv=notrunc \
  status=none
stale="$cache/part-2/part.bin.tmp-999999999"
echo partial >"$stale"
train repaired --set partition.distribute=scatter || { cat "$tmp/repaired.log"; fail "repair run"; }
{ grep -q "dropping the cached part $cache/part-1/part.bin" "$tmp/repaired.log" &&
  grep -q "2 of 3 ranks read their part where they are, 1 receive" "$tmp/repaired.log" &&
  grep -q "sent part 1 " "$tmp/repaired.log" && ! grep -q "sent part 2 " "$tmp/repaired.log"; } ||
  { cat "$tmp/repaired.log"; fail "the corrupted part was not fetched again (alone)"; }
cmp "$tmp/partition/part-1/part.bin" "$cache/part-1/part.bin" || fail "part 1 not repaired"
[[ ! -e $stale ]] || fail "the stale temporary file $stale was left"
python3 "$LIB/compare_runs.py" losses "$tmp/shared" "$tmp/repaired" 0 --params 0 ||
  fail "repaired run differs from the shared run"

# A damaged part in the partition directory itself: rank 1 names that file, not its copy in the
# cache (the same bytes: the transfer's CRC-32 matched), which is removed; every rank exits
# non-zero.
rm -rf "$tmp/cache"
cp "$tmp/partition/part-1/part.bin" "$tmp/part-1.bin"
printf '\xff\xff\xff\xff' | dd of="$tmp/partition/part-1/part.bin" bs=1 seek=$((size / 2)) \
  conv=notrunc status=none
rc=0
train damaged --set partition.distribute=scatter || rc=$?
((rc != 0 && rc != 124)) || { cat "$tmp/damaged.log"; fail "exit $rc with a damaged part"; }
{ (($(grep -c "^adaqp: error.*$tmp/partition/part-1/part.bin: .*removed from the cache" \
  "$tmp/damaged.log") == 1)) && ! grep -q "$tmp/cache/.*part-1/part.bin:" "$tmp/damaged.log"; } ||
  { cat "$tmp/damaged.log"; fail "no single message naming the damaged part where it lies"; }
leftover=$(find "$tmp/cache" -path "*part-1*" -type f)
[[ -z $leftover ]] || fail "the damaged copy stayed in rank 1's cache folder: $leftover"
mv "$tmp/part-1.bin" "$tmp/partition/part-1/part.bin"

# Rank 0 cannot read part 2: every rank exits non-zero, one message with the reason, nothing
# cached for rank 2 (not even its empty folder).
rm -rf "$tmp/cache"
mv "$tmp/partition/part-2/part.bin" "$tmp/part-2.bin"
rc=0
train broken --set partition.distribute=scatter || rc=$?
((rc != 0 && rc != 124)) || { cat "$tmp/broken.log"; fail "exit $rc with an unreadable part"; }
{ (($(grep -c "cannot read the part to send it to rank 2: No such file or directory" \
  "$tmp/broken.log") == 1)) &&
  grep -q "$tmp/partition/part-2/part.bin" "$tmp/broken.log"; } ||
  { cat "$tmp/broken.log"; fail "no single message naming the unreadable part"; }
leftover=$(find "$tmp/cache" -path "*part-2*")
[[ -z $leftover ]] || fail "left in the cache for rank 2: $leftover"
echo "part_distribution: all passed (scatter moved $total bytes)"
