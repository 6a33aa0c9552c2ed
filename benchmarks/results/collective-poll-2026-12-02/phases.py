#!/usr/bin/env python3
"""The all-reduces' time of every run, from the run folders' metrics.jsonl (not from the summary).

Usage: phases.py RUNS_DIR [WARMUP]   (RUNS_DIR holds r<round>-<rate>-<model>-w<W>-<mode>/ folders,
as runs.tgz unpacks). For each run: the mean over the epochs after WARMUP (default 2) of
reduce_time_s (the loss's and the gradients' all-reduce) on each rank, and of assign_time_s on
rank 0; for each (rate, model, mode): the median over rounds, with min-max. Prints a Markdown table.
"""
import json
import re
import statistics
import sys
from pathlib import Path

runs_dir = Path(sys.argv[1])
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 2
cells = {}
for run in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
    m = re.fullmatch(r"r(\d+)-([^-]+)-([^-]+)-w(\d+)-(.+)", run.name)
    if not m:
        continue
    reduce_s, assign_s = {}, []
    for line in open(run / "metrics.jsonl"):
        r = json.loads(line)
        if r.get("event") or "epoch_time_s" not in r or r["epoch"] <= warmup:
            continue
        reduce_s.setdefault(r["rank"], []).append(r["reduce_time_s"])
        if r["rank"] == 0:
            assign_s.append(r.get("assign_time_s", 0.0))
    key = (m[2], m[3], m[5])
    cell = cells.setdefault(key, {"reduce": {}, "assign": []})
    for rank, xs in reduce_s.items():
        cell["reduce"].setdefault(rank, []).append(statistics.fmean(xs))
    cell["assign"].append(statistics.fmean(assign_s))


def ms(xs):
    return f"{1e3 * statistics.median(xs):.1f} ({1e3 * min(xs):.1f}-{1e3 * max(xs):.1f})"


print("| link | model | mode | rounds | reduce ms, rank 0 | reduce ms, rank 1 | assign ms, rank 0 |")
print("|---|---|---|---|---|---|---|")
for (rate, model, mode), c in sorted(cells.items()):
    print(f"| {rate} | {model} | {mode} | {len(c['assign'])} | {ms(c['reduce'][0])} | "
          f"{ms(c['reduce'][1])} | {ms(c['assign'])} |")
