"""Medians (min-max) over the rounds of run.sh's output: bench_sparse_features' sparse step per
density, and each training run's mean epoch (epochs 6.., rank 0) and CPU seconds (all processes)
with the after/before ratios per round; checks that both builds trained the same losses, bit for
bit."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
rounds = sorted({int(p.stem.rsplit("-", 1)[1]) for p in out.glob("bench-before-*.txt")})


def spread(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def bench(v, r):
    rows = {}
    for line in (out / f"bench-{v}-{r}.txt").read_text().splitlines():
        parts = line.split(",")
        if len(parts) == 4 and parts[0][:2] == "0.":
            rows[parts[0]] = (float(parts[1]), float(parts[2]))
    return rows


print("bench_sparse_features, sparse step ms (dense/sparse), median (min-max) of rounds")
for density in bench("before", rounds[0]):
    cells = []
    for v in ("before", "after"):
        ms = [bench(v, r)[density][1] for r in rounds]
        ratio = [bench(v, r)[density][0] / bench(v, r)[density][1] for r in rounds]
        cells.append(f"{v} {spread(ms)} ms, dense/sparse {spread(ratio)}")
    print(f"  {density}: " + "; ".join(cells))


def records(run):
    return [json.loads(l) for l in (out / run / "metrics.jsonl").read_text().splitlines()]


print("training, mean epoch ms from epoch 6 (rank 0), median (min-max) of rounds")
def cpu_s(run):
    user, system, _ = (float(x) for x in (out / f"{run}.time").read_text().split()[-3:])
    return user + system


for ds in ("cora-w1", "cora", "citeseer", "coauthor-physics"):
    epoch = {}
    for v in ("before", "after"):
        epoch[v] = []
        for r in rounds:
            recs = [x for x in records(f"{ds}-{v}-{r}") if "epoch" in x and "event" not in x]
            epoch[v].append(1000 * statistics.mean(x["epoch_time_s"] for x in recs if x["epoch"] >= 6))
    ratio = [a / b for a, b in zip(epoch["after"], epoch["before"])]
    cpu = {v: [cpu_s(f"{ds}-{v}-{r}") for r in rounds] for v in ("before", "after")}
    cpu_ratio = [a / b for a, b in zip(cpu["after"], cpu["before"])]
    same = all(
        [x.get("loss") for x in records(f"{ds}-before-{r}")]
        == [x.get("loss") for x in records(f"{ds}-after-{r}")]
        for r in rounds)
    acc = {x.get("test_acc_at_best_val") for v in ("before", "after") for r in rounds
           for x in records(f"{ds}-{v}-{r}") if x.get("event") == "summary"}
    print(f"  {ds}: before {spread(epoch['before'])}, after {spread(epoch['after'])}, "
          f"after/before per round {spread(ratio)}; CPU s before {spread(cpu['before'])}, "
          f"after {spread(cpu['after'])}, after/before {spread(cpu_ratio)}; "
          f"losses equal bit for bit: {same}; test acc at best val {sorted(acc)}")
