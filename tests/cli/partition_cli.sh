#!/usr/bin/env bash
# End-to-end: adaqp generate / partition / info on a small synthetic job, plus the error paths
# (unknown config key, existing partition directory).
set -euo pipefail
: "${ADAQP_BIN:?set ADAQP_BIN to the adaqp binary}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$WORK/job.yaml" <<YAML
dataset:
  format: numpy
  path: $WORK/graph
  synthetic: {num_nodes: 1500, num_classes: 5, feat_dim: 8, avg_degree: 6, seed: 3}
partition: {method: metis, parts: 3, dir: $WORK/part}
YAML

"$ADAQP_BIN" generate --config "$WORK/job.yaml" --out "$WORK/graph" >"$WORK/generate.out"
for f in edge_index feat label train valid test; do
  [[ -s "$WORK/graph/$f.npy" ]] || fail "generate did not write $f.npy"
done
grep -q "generated 1500 nodes, 9000 directed edges" "$WORK/generate.out" ||
  fail "unexpected generate summary: $(cat "$WORK/generate.out")"
# A mistyped command is named, with the commands there are.
rc=0
"$ADAQP_BIN" partiton --config "$WORK/job.yaml" >"$WORK/typo.out" 2>&1 || rc=$?
((rc == 1)) && grep -qx "adaqp: error: unknown command 'partiton' (commands: generate, partition, info, train)" \
  "$WORK/typo.out" || fail "mistyped command (exit $rc): $(cat "$WORK/typo.out")"
# A dataset.path other than --out would be silently replaced by the generated graph: refused.
if "$ADAQP_BIN" generate --config "$WORK/job.yaml" --out "$WORK/other" >"$WORK/other.out" 2>&1; then
  fail "generate accepted dataset.path $WORK/graph with --out $WORK/other"
fi
grep -q "dataset.path = $WORK/graph but --out $WORK/other" "$WORK/other.out" ||
  fail "generate's error: $(cat "$WORK/other.out")"
[[ ! -e $WORK/other ]] || fail "generate wrote $WORK/other after refusing the job"
"$ADAQP_BIN" generate --set "dataset.path=$WORK/same/" --out "$WORK/same" >/dev/null ||
  fail "generate refused dataset.path $WORK/same/ with --out $WORK/same"
(cd "$WORK" && "$ADAQP_BIN" generate --set dataset.path=./rel --out rel >/dev/null) ||
  fail "generate refused dataset.path ./rel with --out rel"
# ... and a dataset.format other than the layout written, which the job could not read.
if "$ADAQP_BIN" generate --set dataset.format=ogb --set "dataset.path=$WORK/fmt" --out "$WORK/fmt" \
  >"$WORK/fmt.out" 2>&1; then
  fail "generate accepted dataset.format ogb for the NumPy layout it writes"
fi
grep -q "dataset.format = ogb but adaqp generate writes $WORK/fmt in the numpy layout" \
  "$WORK/fmt.out" || fail "generate's error: $(cat "$WORK/fmt.out")"
[[ ! -e $WORK/fmt ]] || fail "generate wrote $WORK/fmt after refusing the job"
# Missing parents are made (as partition does); a parent that is a file is named with the target.
"$ADAQP_BIN" generate --set dataset.synthetic.num_nodes=400 --set dataset.synthetic.avg_degree=4 \
  --out "$WORK/new/deeper/g" >/dev/null ||
  fail "generate into a directory whose parents do not exist"
touch "$WORK/plainfile"
if "$ADAQP_BIN" generate --out "$WORK/plainfile/g" >"$WORK/underfile.out" 2>&1; then
  fail "generate under a regular file"
fi
grep -q "adaqp: error: $WORK/plainfile/g: cannot create the directory: Not a directory" \
  "$WORK/underfile.out" || fail "generate under a file: $(cat "$WORK/underfile.out")"

# Started by mpirun, generate and info run on the job's first process: written and printed once,
# every rank ending alike (the ranks had raced for --out: one wrote it, the other failed, "already
# exists"). run_np2 CMD ARGS...: under mpirun -np 2, each rank's exit status in $WORK/np2.codes.
run_np2() {
  : >"$WORK/np2.codes"
  # shellcheck disable=SC2016
  timeout 120 mpirun --oversubscribe -np 2 bash -c \
    '"$0" "${@:2}"; rc=$?; echo "$OMPI_COMM_WORLD_RANK $rc" >>"$1"; exit $rc' "$ADAQP_BIN" \
    "$WORK/np2.codes" "$@"
}
ranks_with() { awk -v want="$1" '($2 == 0) == (want == "ok")' "$WORK/np2.codes" | wc -l; }
run_np2 generate --set dataset.synthetic.num_nodes=400 --out "$WORK/np2" >"$WORK/np2.out" 2>&1 ||
  fail "generate under mpirun -np 2: $(cat "$WORK/np2.out" "$WORK/np2.codes")"
(($(grep -c '^generated 400 nodes' "$WORK/np2.out") == 1 && $(ranks_with ok) == 2)) ||
  fail "generate under mpirun -np 2, expected one summary and 2 ranks exiting 0: $(cat "$WORK/np2.out" "$WORK/np2.codes")"
run_np2 info --dataset "$WORK/np2" >"$WORK/np2-info.out" 2>&1 ||
  fail "info under mpirun -np 2: $(cat "$WORK/np2-info.out")"
(($(grep -c '^nodes  *400$' "$WORK/np2-info.out") == 1)) ||
  fail "info under mpirun -np 2, expected one report: $(cat "$WORK/np2-info.out")"
if run_np2 generate --set dataset.synthetic.num_nodes=3 --out "$WORK/np2-bad" >"$WORK/np2-bad.out" 2>&1; then
  fail "generate under mpirun -np 2 accepted num_nodes 3"
fi
(($(grep -c 'adaqp: error' "$WORK/np2-bad.out") == 1 && $(ranks_with failed) == 2)) &&
  grep -q "dataset.synthetic.num_nodes = 3: must be in" "$WORK/np2-bad.out" ||
  fail "a bad generate under mpirun -np 2, expected one error and 2 ranks failing: $(cat "$WORK/np2-bad.out" "$WORK/np2.codes")"
[[ ! -e $WORK/np2-bad ]] || fail "a refused generate under mpirun -np 2 wrote $WORK/np2-bad"

"$ADAQP_BIN" partition --config "$WORK/job.yaml" >"$WORK/partition.out"
for f in meta.yaml part-0/part.bin part-1/part.bin part-2/part.bin; do
  [[ -s "$WORK/part/$f" ]] || fail "partition did not write $f"
done
# The edge cut the command reports is the one of the parts it wrote, recounted here from the files
# alone (the documented .npy and array-file formats, docs/data-formats.md; no NumPy needed).
python3 - "$WORK" <<'PY' || fail "edge cut: $(cat "$WORK/partition.out")"
import ast, re, struct, sys

work = sys.argv[1]

def npy(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    hlen, start = (struct.unpack_from("<H", data, 8)[0], 10) if major == 1 else \
        (struct.unpack_from("<I", data, 8)[0], 12)
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    assert header["descr"] == "<i8" and not header["fortran_order"], header
    n = 1
    for dim in header["shape"]:
        n *= dim
    return header["shape"], struct.unpack_from(f"<{n}q", data, start + hlen)

def owned_gids(path):
    data = open(path, "rb").read()
    assert data[:8] == b"ADQPARR1", path
    (count,), at = struct.unpack_from("<I", data, 8), 12
    for _ in range(count):
        (name_len,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + name_len].decode()
        at += 4 + name_len
        dtype, n, _crc = struct.unpack_from("<BQI", data, at)
        at += 13
        size = {1: 4, 2: 8, 3: 1, 4: 4, 5: 8}[dtype]
        if name == "owned_gid":
            assert dtype == 2, dtype
            return struct.unpack_from(f"<{n}q", data, at)
        at += n * size
    raise AssertionError(f"{path}: no owned_gid")

shape, edges = npy(f"{work}/graph/edge_index.npy")
num_edges = shape[1]
owner = {}
for part in range(3):
    for gid in owned_gids(f"{work}/part/part-{part}/part.bin"):
        assert gid not in owner, f"node {gid} owned twice"
        owner[gid] = part
assert len(owner) == 1500, len(owner)
cut = sum(owner[edges[e]] != owner[edges[num_edges + e]] for e in range(num_edges))
reported = re.search(r"edge cut\s+(\d+)", open(f"{work}/partition.out").read())
assert reported, "no edge cut reported"
assert int(reported.group(1)) == cut, f"reported edge cut {reported.group(1)}, recounted {cut}"
meta = re.search(r"edge_cut: (\d+)", open(f"{work}/part/meta.yaml").read())
assert meta and int(meta.group(1)) == cut, f"meta.yaml edge_cut {meta and meta.group(1)}, recounted {cut}"
print(f"edge cut {cut} of {num_edges} edges, recounted from the files")
import json
json.dump(owner, open(f"{work}/owner.json", "w"))
json.dump([(edges[e], edges[num_edges + e]) for e in range(num_edges)], open(f"{work}/edges.json", "w"))
PY
ls "$WORK" | grep -q '\.tmp-' && fail "temporary directory left behind"

"$ADAQP_BIN" info --config "$WORK/job.yaml" --partition "$WORK/part" --json >"$WORK/info.json"
python3 - "$WORK/info.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
d, p = info["dataset"], info["partition"]
# 9000 generated edges plus the default job's one self-loop per node
assert d["nodes"] == 1500 and d["edges"] == 10500 and d["self_loops"] == 1500, d
assert d["feat_dim"] == 8, d
assert d["num_classes"] == 5 and d["train"] + d["valid"] + d["test"] == 1500, d
assert p["parts"] == 3 and len(p["per_part"]) == 3, p
assert sum(r["owned"] for r in p["per_part"]) == 1500, p
assert sum(r["in_edges"] for r in p["per_part"]) == 10500, p
rows = sum(r["halo"] for r in p["per_part"])
assert rows == p["exchange_rows"] == sum(r["sent_rows"] for r in p["per_part"]), p
assert p["exchange_bytes_by_hidden"]["64"] == rows * 64 * 4, p
PY
"$ADAQP_BIN" info --partition "$WORK/part" | grep -q "halo exchange moves" || fail "info text"

# Boundary covers: per ordered pair of parts, the cut edges, today's source rows and the size of a
# minimum vertex cover (the maximum matching's, by König) recomputed here from the generated edges
# (edge_index: sources in row 0) and the owners in the part files, by Kuhn's augmenting paths.
"$ADAQP_BIN" info --partition "$WORK/part" --covers --json >"$WORK/covers.json"
"$ADAQP_BIN" info --partition "$WORK/part" --covers | grep -q "boundary covers" || fail "covers text"
# info reads the counts from meta.yaml; --verify reads every part: a flipped byte or a missing
# part fails it.
"$ADAQP_BIN" info --partition "$WORK/part" --verify >"$WORK/verified.out" ||
  fail "info --verify of a sound partition"
grep -q "^verified: all [0-9]* parts read whole" "$WORK/verified.out" ||
  fail "info --verify of a sound partition does not say so: $(cat "$WORK/verified.out")"
"$ADAQP_BIN" info --partition "$WORK/part" --verify --json |
  python3 -c 'import json, sys; assert json.load(sys.stdin)["partition"]["verified"] is True' ||
  fail "info --verify --json of a sound partition lacks partition.verified"
# With the job, --verify also checks that the partition is the job's: another graph (a seed
# changed) or another part count is refused, naming what differs (found by a review, 2026-12-06:
# it printed "verified" and exited 0).
"$ADAQP_BIN" info --config "$WORK/job.yaml" --partition "$WORK/part" --verify |
  grep -q "^verified: .*; the job's partition$" || fail "info --verify with the job's partition"
"$ADAQP_BIN" generate --config "$WORK/job.yaml" --set "dataset.path=$WORK/graph4" \
  --set dataset.synthetic.seed=4 --out "$WORK/graph4" >/dev/null
for change in "dataset.path=$WORK/graph4" partition.parts=2; do
  rc=0
  "$ADAQP_BIN" info --config "$WORK/job.yaml" --set "$change" --partition "$WORK/part" --verify \
    >"$WORK/other-job.out" 2>&1 || rc=$?
  ((rc == 1)) && grep -q "^adaqp: error: partition $WORK/part was made with ${change%%=*} = " \
    "$WORK/other-job.out" || fail "info --verify with $change (exit $rc): $(cat "$WORK/other-job.out")"
done
cp -r "$WORK/part" "$WORK/broken"
python3 - "$WORK/broken/part-1/part.bin" <<'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(os.path.getsize(sys.argv[1]) - 5)
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 1]))
PY
"$ADAQP_BIN" info --partition "$WORK/broken" >/dev/null || fail "info without --verify reads the parts"
if "$ADAQP_BIN" info --partition "$WORK/broken" --verify >"$WORK/verify.out" 2>&1; then
  fail "info --verify passed a flipped byte"
fi
grep -qE "adaqp: error: $WORK/broken/part-1/part.bin: array '[a-z_]+': checksum mismatch \(corrupted file\)" \
  "$WORK/verify.out" || fail "$(cat "$WORK/verify.out")"
cp "$WORK/part/part-1/part.bin" "$WORK/broken/part-1/part.bin"
rm -r "$WORK/broken/part-2"
if "$ADAQP_BIN" info --partition "$WORK/broken" --verify >"$WORK/missing.out" 2>&1; then
  fail "info passed a partition without part 2"
fi
grep -q "part-2/part.bin: missing: meta.yaml lists 3 parts" "$WORK/missing.out" || fail "$(cat "$WORK/missing.out")"
# ... which info finds without --verify too (it checks that every part file is there).
if "$ADAQP_BIN" info --partition "$WORK/broken" >"$WORK/missing.out" 2>&1; then
  fail "info without --verify passed a partition without part 2"
fi
grep -q "part-2/part.bin: missing: meta.yaml lists 3 parts" "$WORK/missing.out" || fail "$(cat "$WORK/missing.out")"
# --dataset reads a directory as stored: a --set would have loaded the job's dataset instead.
if "$ADAQP_BIN" info --dataset "$WORK/graph" --set output.log_level=warn >"$WORK/info_set.out" 2>&1; then
  fail "info --dataset with --set described another dataset: $(cat "$WORK/info_set.out")"
fi
grep -q "adaqp: error: info: --dataset DIR reads the directory as stored and takes no --set" \
  "$WORK/info_set.out" || fail "$(cat "$WORK/info_set.out")"
python3 - "$WORK" <<'PY' || fail "boundary covers"
import json, sys
from collections import defaultdict

work = sys.argv[1]
owner = {int(k): v for k, v in json.load(open(f"{work}/owner.json")).items()}
edges = json.load(open(f"{work}/edges.json"))
pairs = defaultdict(set)
for src, dst in edges:
    if owner[src] != owner[dst]:
        pairs[(owner[src], owner[dst])].add((src, dst))

def matching(cut):
    adj = defaultdict(list)
    for s, d in cut:
        adj[s].append(d)
    match = {}
    def augment(s, seen):
        for d in adj[s]:
            if d not in seen:
                seen.add(d)
                if d not in match or augment(match[d], seen):
                    match[d] = s
                    return True
        return False
    return sum(augment(s, set()) for s in adj)

sys.setrecursionlimit(100000)
got = json.load(open(f"{work}/covers.json"))["boundary_covers"]
reported = {(p["from"], p["to"]): p for p in got["pairs"]}
assert set(reported) == set(pairs), (sorted(reported), sorted(pairs))
for key, cut in pairs.items():
    p = reported[key]
    want = (len(cut), len({s for s, _ in cut}), matching(cut))
    have = (p["cut_edges"], p["source_rows"], p["cover_sources"] + p["cover_partials"])
    assert have == want, f"pair {key}: (cut edges, rows, cover) reported {have}, recomputed {want}"
rows = got["source_rows"]
cover = got["cover_sources"] + got["cover_partials"]
assert 0 < cover < rows, got
print(f"boundary covers: {cover} rows instead of {rows} over {len(pairs)} pairs, recomputed")
PY

# An unknown key: exit code 1 and a message naming the key.
printf 'communication:\n  bitz: 4\n' >"$WORK/bad.yaml"
set +e
"$ADAQP_BIN" partition --config "$WORK/bad.yaml" 2>"$WORK/bad.err"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "unknown key: exit code $rc, expected 1"
grep -q "unknown key 'communication.bitz'" "$WORK/bad.err" || fail "message: $(cat "$WORK/bad.err")"

# Partitioning into an existing directory fails and leaves it untouched.
before=$(cd "$WORK/part" && find . -type f -exec sha256sum {} + | sort)
set +e
"$ADAQP_BIN" partition --config "$WORK/job.yaml" --set partition.method=random 2>"$WORK/exists.err"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "existing directory: exit code $rc, expected 1"
grep -q "already exists" "$WORK/exists.err" || fail "message: $(cat "$WORK/exists.err")"
# ... before the dataset is read (a large one took seconds to be refused).
! grep -q "loaded" "$WORK/exists.err" || fail "read the dataset first: $(cat "$WORK/exists.err")"
after=$(cd "$WORK/part" && find . -type f -exec sha256sum {} + | sort)
[[ "$before" == "$after" ]] || fail "existing partition directory was modified"
ls "$WORK" | grep -q '\.tmp-' && fail "temporary directory left behind"
# The same under mpirun: one error line, and every rank ends non-zero (not only the first, which
# partitions), as does a bad key read by every rank (found by a review, 2026-12-06: the others
# exited 0, and a bad key was said once per rank).
for args in "--set partition.method=random" "--set partition.parts=0"; do
  # shellcheck disable=SC2016,SC2086  # expanded by the ranks' shell; args split on purpose
  timeout 120 mpirun --oversubscribe -np 2 bash -c \
    '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK exit $?"' "$ADAQP_BIN" partition \
    --config "$WORK/job.yaml" $args >"$WORK/mpi-exists.out" 2>&1 || true
  [[ $(grep -c "^adaqp: error" "$WORK/mpi-exists.out") == 1 &&
    $(grep -c "^rank [01] exit 1$" "$WORK/mpi-exists.out") == 2 ]] ||
    fail "partition under mpirun with $args: $(cat "$WORK/mpi-exists.out")"
done

# A dataset without training nodes is refused before anything is written (as train refuses it).
# shellcheck source=tests/cli/lib/numpy_dataset.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/numpy_dataset.sh"
without_training_nodes "$WORK/graph" "$WORK/no_train"
rc=0
"$ADAQP_BIN" partition --config "$WORK/job.yaml" --set "dataset.path=$WORK/no_train" \
  -o "$WORK/no_train_part" 2>"$WORK/no_train.err" || rc=$?
((rc == 1)) && grep -q "$WORK/no_train: training split: has no nodes" "$WORK/no_train.err" ||
  fail "a dataset without training nodes (exit $rc): $(cat "$WORK/no_train.err")"
[[ ! -e $WORK/no_train_part ]] || fail "a dataset without training nodes left a partition"

# A partition directory the file system refuses (under a file): one error naming the path.
touch "$WORK/a_file"
rc=0
"$ADAQP_BIN" partition --config "$WORK/job.yaml" -o "$WORK/a_file/part" 2>"$WORK/under_file.err" ||
  rc=$?
((rc == 1)) && [[ $(grep -c "adaqp: error: $WORK/a_file/part: cannot create" "$WORK/under_file.err") == 1 ]] ||
  fail "a partition under a file (exit $rc): $(cat "$WORK/under_file.err")"
# A generated graph larger than the process may allocate (its address space limited here): one
# error naming the keys that size it, not an internal error.
rc=0
(ulimit -v 2000000 && exec "$ADAQP_BIN" generate --set dataset.synthetic.num_nodes=100000 --set dataset.synthetic.feat_dim=1048576 \
  --out "$WORK/huge") 2>"$WORK/huge.err" || rc=$?
((rc == 1)) && grep -q "adaqp: error: out of memory: .*dataset.synthetic.num_nodes" "$WORK/huge.err" ||
  fail "a graph beyond the memory limit (exit $rc): $(cat "$WORK/huge.err")"
[[ ! -e $WORK/huge ]] || fail "a graph beyond the memory limit left $WORK/huge"

# partition (metis) under mpirun: the job's first process partitions, the others have nothing to do.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe \
  -np 2 "$ADAQP_BIN" partition --config "$WORK/job.yaml" -o "$WORK/under_mpirun" \
  >"$WORK/under_mpirun.log" 2>&1 || fail "partition under mpirun: $(cat "$WORK/under_mpirun.log")"
(($(grep -c "^edge cut" "$WORK/under_mpirun.log") == 1)) && cmp -s "$WORK/part/meta.yaml" \
  "$WORK/under_mpirun/meta.yaml" || fail "partition under mpirun: $(cat "$WORK/under_mpirun.log")"

# A partition directory named with a trailing slash: train makes it there and reads it back.
for attempt in first again; do
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe \
    -np 3 "$ADAQP_BIN" train --config "$WORK/job.yaml" --set "partition.dir=$WORK/slash/part/" \
    --set "output.dir=$WORK/slash/out-$attempt" --set training.epochs=1 --set training.threads=1 \
    --set training.device=cpu >"$WORK/slash-$attempt.log" 2>&1 ||
    fail "partition.dir with a trailing slash ($attempt run): $(cat "$WORK/slash-$attempt.log")"
done
[[ -s $WORK/slash/part/meta.yaml ]] || fail "no partition in $WORK/slash/part"
echo "partition_cli: ok"
