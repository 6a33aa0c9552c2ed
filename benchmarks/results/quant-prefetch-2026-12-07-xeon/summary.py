"""Medians (min-max) of bench_quant's one-thread rows per build, stride, op and width.

Reads FOLDER/raw (FOLDER: the first argument, else this script's folder).
"""
import glob
import json
import os
import statistics
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rows = {}
for path in sorted(glob.glob(os.path.join(here, "raw", "round*-stride*-*.txt"))):
    name = os.path.basename(path)[:-4]
    _, stride, build = name.split("-")
    for line in open(path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r["device"] != "cpu" or r["threads"] != 1 or "bits" not in r:
            continue
        key = (r["op"], r["bits"], stride, build)
        rows.setdefault(key, []).append((r["gbps"], r["fraction_of_memcpy"]))
print("| op | bits | stride | build | GB/s median (min-max) | of memcpy median (min-max) | runs |")
print("|---|---|---|---|---|---|---|")
for key in sorted(rows):
    g = [x[0] for x in rows[key]]
    f = [100 * x[1] for x in rows[key]]
    print(f"| {key[0]} | {key[1]} | {key[2][6:]} | {key[3]} | {statistics.median(g):.2f} "
          f"({min(g):.2f}-{max(g):.2f}) | {statistics.median(f):.1f}% ({min(f):.1f}-{max(f):.1f}) "
          f"| {len(g)} |")
sys.exit(0)
