"""Epoch windows and peak RSS of a links sweep: python3 windows.py RUNS_JSONL [RUN_ROOT].

Per (link, model, mode), the medians over rounds of the slowest rank's mean epoch over epochs 3-10,
its median over epochs 11 to the last, and (with RUN_ROOT, the folder runs.tgz unpacks into) the
larger rank's peak RSS of the run's epochs.
"""
import collections
import json
import os
import statistics as st
import sys


def peak_mib(run_dir):
    best = 0
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        for line in f:
            v = json.loads(line).get("peak_rss_bytes")
            if isinstance(v, (int, float)):
                best = max(best, v)
    return best / 2**20


runs_path = sys.argv[1]
root = sys.argv[2] if len(sys.argv) > 2 else None
rows = collections.defaultdict(list)
last = 0
with open(runs_path) as f:
    for line in f:
        r = json.loads(line)
        e = r["epoch_times_s"]
        last = len(e)
        rss = peak_mib(os.path.join(root, os.path.basename(r["run_dir"]))) if root else float("nan")
        rows[(r["rate"], r["model"], r["mode"])].append((st.mean(e[2:10]), st.median(e[10:]), rss))
print(f"| link | model | mode | epochs 3-10 s | epochs 11-{last} s | peak RSS MiB |")
print("|---|---|---|---|---|---|")
for k in sorted(rows):
    v = rows[k]
    cols = [st.median(x[i] for x in v) for i in range(3)]
    print(f"| {k[0]} | {k[1]} | {k[2]} | {cols[0]:.4f} | {cols[1]:.4f} | {cols[2]:.0f} |")
