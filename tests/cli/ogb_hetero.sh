#!/usr/bin/env bash
# End-to-end on OGB's heterogeneous raw layout (as ogbn-mag ships it), written here by Python's
# standard library: papers (with features and labels, the label planted in both the features and
# the paper's topic), authors and topics without features; relations writes, cites and has_topic.
# - `adaqp info --json` reports the node types and the relations' edge counts the script wrote
#   (checked here, not by the binary);
# - `mpirun -np 2 adaqp train` with dataset.add_reverse trains GraphSAGE on the homogeneous view
#   (reverse relations and per-type self-loops: 8 relations) above chance, and R-GCN (AdaQP, 2
#   bases) on the same partition; the partition it wrote keeps the types (`adaqp info --partition`, which also counts the covers per relation);
# - dataset.symmetrize and partition.method ptscotch are refused with one clear error each, the
#   job exiting non-zero;
# - `adaqp generate` writes the ogbn-mag-shaped generated graph (dataset.synthetic.heterogeneous)
#   in this layout, and the directory is the generator's dataset (the same fingerprint).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

data=$tmp/mag
"$PYTHON" - "$data" <<'PY'
import gzip, json, os, random, sys
out = sys.argv[1]
rng = random.Random(3)
papers, authors, topics, classes, feat = 300, 200, 8, 4, 16
topic = [rng.randrange(topics) for _ in range(papers)]
label = [t % classes for t in topic]
def write(path, lines):
    path = os.path.join(out, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        f.write("".join(line + "\n" for line in lines))
write("raw/num-node-dict.csv.gz", ["topic,paper,author", f"{topics},{papers},{authors}"])
relations = {
    ("author", "writes", "paper"): [(rng.randrange(authors), p) for p in range(papers) for _ in range(2)],
    ("paper", "cites", "paper"): [(p, q) for p in range(papers) for q in rng.sample(
        [q for q in range(papers) if label[q] == label[p] and q != p], 3)],
    ("paper", "has_topic", "topic"): [(p, topic[p]) for p in range(papers)],
}
write("raw/triplet-type-list.csv.gz", [",".join(t) for t in relations])
for t, edges in relations.items():
    write(f"raw/relations/{'___'.join(t)}/edge.csv.gz", [f"{u},{v}" for u, v in edges])
    write(f"raw/relations/{'___'.join(t)}/num-edge-list.csv.gz", [str(len(edges))])
write("raw/node-feat/paper/node-feat.csv.gz",
      [",".join(f"{(1.0 if k == label[p] else 0.0) + rng.gauss(0, 0.8):.4f}" for k in range(feat))
       for p in range(papers)])
write("raw/node-label/paper/node-label.csv.gz", [str(y) for y in label])
order = list(range(papers))
rng.shuffle(order)
for name, ids in (("train", order[:180]), ("valid", order[180:240]), ("test", order[240:])):
    write(f"split/time/paper/{name}.csv.gz", [str(v) for v in sorted(ids)])
json.dump({"types": {"author": authors, "paper": papers, "topic": topics},
           "edges": {",".join(t): len(e) for t, e in relations.items()}},
          open(os.path.join(out, "..", "expected.json"), "w"))
PY

"$ADAQP_BIN" info --dataset "$data" --json >"$tmp/info.json" 2>"$tmp/info.log" ||
  { cat "$tmp/info.log"; fail "adaqp info"; }
"$PYTHON" - "$tmp/info.json" "$tmp/expected.json" <<'PY' || fail "adaqp info's counts"
import json, sys
info = json.load(open(sys.argv[1]))["dataset"]
want = json.load(open(sys.argv[2]))
types = {t["name"]: t for t in info["node_types"]}
assert {n: t["nodes"] for n, t in types.items()} == want["types"], types
assert [n for n in types if types[n]["features"]] == ["paper"], types
assert types["paper"]["split"] == 300 and types["author"]["split"] == 0, types
edges = {f'{r["source"]},{r["name"]},{r["target"]}': r["edges"] for r in info["relations"]}
assert edges == want["edges"], edges
assert info["nodes"] == sum(want["types"].values()) and info["edges"] == sum(want["edges"].values())
print("ok: adaqp info reports", len(types), "node types and", len(edges), "relations")
PY

job=(--set "dataset.path=$data" --set dataset.add_reverse=true --set model.type=sage
     --set model.layers=2 --set model.hidden=32 --set training.epochs=40 --set training.lr=0.02
     --set training.threads=1 --set partition.parts=2 --set communication.mode=vanilla)
timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${job[@]}" \
  --set "partition.dir=$tmp/parts" --set "output.dir=$tmp/run" >"$tmp/train.log" 2>&1 ||
  { tail -n 30 "$tmp/train.log"; fail "training on the heterogeneous dataset"; }
grep -q "heterogeneous: 3 node types, 8 relations" "$tmp/train.log" ||
  { grep loaded "$tmp/train.log"; fail "the loaded graph is not 3 node types and 8 relations"; }
"$ADAQP_BIN" info --partition "$tmp/parts" 2>/dev/null | grep -q "3 node types, 8 relations" ||
  fail "adaqp info --partition does not report the partition's types"
"$ADAQP_BIN" info --partition "$tmp/parts" --covers 2>/dev/null | grep -q "^per relation" ||
  fail "adaqp info --covers does not count the covers per relation"
"$PYTHON" - "$tmp/run/metrics.jsonl" <<'PY' || fail "training accuracy"
import json, sys
summary = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "summary"][-1]
best = summary["best_val_acc"]
assert best > 0.6, f"best validation accuracy {best} (4 classes, chance 0.25)"
print(f"ok: GraphSAGE on the homogeneous view, best validation accuracy {best:.3f}")
PY

# R-GCN on the same partition over the relation-first layout, its messages quantized with adaptive
# widths (AdaQP).
timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${job[@]}" \
  --set model.type=rgcn --set model.num_bases=2 --set communication.mode=adaqp \
  --set communication.exchange=relation_first \
  --set "partition.dir=$tmp/parts" --set "output.dir=$tmp/rgcn" >"$tmp/rgcn.log" 2>&1 ||
  { tail -n 30 "$tmp/rgcn.log"; fail "R-GCN on the heterogeneous dataset"; }
"$PYTHON" - "$tmp/rgcn/metrics.jsonl" <<'PY' || fail "R-GCN's accuracy"
import json, sys
records = list(map(json.loads, open(sys.argv[1])))
summary = [r for r in records if r.get("event") == "summary"][-1]
best = summary["best_val_acc"]
assert best > 0.6, f"best validation accuracy {best} (4 classes, chance 0.25)"
quantized = sum(r.get("quant_time_s", 0) > 0 for r in records if "epoch" in r)
assert quantized > 0, "no epoch quantized a message"
print(f"ok: R-GCN (AdaQP), best validation accuracy {best:.3f}, {quantized} quantized epochs")
PY
# The full-precision bytes AdaQP reports against are what Vanilla sends (layer 1's rows both ways:
# layer 0 reads its cached aggregation of the features). Vanilla runs with the default exchange,
# auto, which takes relation_first here (its rows as wide as the 4 classes, against the rows
# layout's 32 hidden columns) and says so.
timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${job[@]}" \
  --set model.type=rgcn --set model.num_bases=2 --set training.epochs=2 \
  --set "partition.dir=$tmp/parts" --set "output.dir=$tmp/rgcn-vanilla" >"$tmp/rgcn-v.log" 2>&1 ||
  { tail -n 30 "$tmp/rgcn-v.log"; fail "R-GCN, Vanilla"; }
grep -q "communication.exchange auto: relation_first (per epoch at full precision" "$tmp/rgcn-v.log" ||
  { tail -n 30 "$tmp/rgcn-v.log"; fail "the exchange auto's choice is not logged"; }
"$PYTHON" - "$tmp/rgcn/metrics.jsonl" "$tmp/rgcn-vanilla/metrics.jsonl" <<'PY' ||
import json, sys
adaqp = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "summary"][-1]
records = list(map(json.loads, open(sys.argv[2])))
vanilla = [r for r in records if r.get("event") == "summary"][-1]
assert vanilla["exchange"] == "relation_first", vanilla["exchange"]
sent = sum(r["bytes_sent"] for r in records if r.get("event") != "summary" and r["epoch"] == 2)
assert adaqp["full_precision_bytes_per_epoch"] == sent, (adaqp["full_precision_bytes_per_epoch"], sent)
print(f"ok: R-GCN's full-precision bytes per epoch are Vanilla's (auto: relation_first): {sent}")
PY
  fail "R-GCN's full-precision byte count"

# shellcheck source=tests/cli/lib/expect_failure.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect_failure.sh"
# expect_refusal NAME MESSAGE SETS...: the job on 2 ranks fails as expect_failure requires.
expect_refusal() {
  local name=$1 message=$2
  shift 2
  expect_failure "$name" 2 "$message" "${job[@]}" "$@" --set "output.dir=$tmp/$name"
}
expect_refusal symmetrize "a heterogeneous graph: use dataset.add_reverse" \
  --set dataset.add_reverse=false --set dataset.symmetrize=true --set "partition.dir=$tmp/p2"
expect_refusal ptscotch "slices of a heterogeneous dataset" \
  --set dataset.add_reverse=false --set partition.method=ptscotch --set "partition.dir=$tmp/p3"

# The generator's ogbn-mag-shaped graph: `adaqp generate` writes it in this layout, and the
# directory is the same dataset as the generator's own (the fingerprints of a partition of each).
gen=(--set dataset.synthetic.heterogeneous=true --set dataset.synthetic.num_nodes=3000
     --set dataset.synthetic.num_classes=4 --set dataset.synthetic.feat_dim=16
     --set partition.parts=2)
"$ADAQP_BIN" generate "${gen[@]}" --out "$tmp/gen" >"$tmp/gen.log" 2>&1 ||
  { cat "$tmp/gen.log"; fail "adaqp generate of a heterogeneous graph"; }
grep -q "OGB heterogeneous layout" "$tmp/gen.log" || fail "generate did not write OGB's layout"
"$ADAQP_BIN" partition "${gen[@]}" --out "$tmp/gen-parts" >/dev/null 2>&1 ||
  fail "partitioning the generator's graph"
"$ADAQP_BIN" partition "${gen[@]}" --set dataset.format=auto --set "dataset.path=$tmp/gen" \
  --out "$tmp/dir-parts" >/dev/null 2>&1 || fail "partitioning the written directory"
fingerprint() { grep dataset_fingerprint "$1/meta.yaml"; }
[[ "$(fingerprint "$tmp/gen-parts")" == "$(fingerprint "$tmp/dir-parts")" ]] ||
  fail "the written directory is another dataset: $(fingerprint "$tmp/gen-parts") vs $(fingerprint "$tmp/dir-parts")"
grep -q "node_types: \[author, field_of_study, institution, paper\]" "$tmp/dir-parts/meta.yaml" ||
  fail "the partition of the written directory lists other node types"
echo "ok: the generated graph round-trips through OGB's heterogeneous layout"
