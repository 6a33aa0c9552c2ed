"""Medians (min-max) over the rounds of GB/s, per stride, op and width, before and after."""
import json
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1] if len(sys.argv) > 1 else "runs.jsonl"):
    r = json.loads(line)
    runs[(r["stride"], r["op"], r["bits"], r["side"])].append(r["gbps"])
print("| stride | op | bits | before GB/s | after GB/s | after / before |")
print("|---|---|---|---|---|---|")
for stride, op, bits in sorted({k[:3] for k in runs}):
    b, a = runs[(stride, op, bits, "before")], runs[(stride, op, bits, "after")]
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"| {stride} | {op} | {bits} | {mb:.2f} ({min(b):.2f}-{max(b):.2f}) | "
          f"{ma:.2f} ({min(a):.2f}-{max(a):.2f}) | {ma / mb:.2f} |")
