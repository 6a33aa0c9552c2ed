"""Medians (min-max) of bench_quant's quantize and dequantize lines over the alternated rounds in
runs/: before.round*.txt and after.round*.txt, one JSON line per (op, bits) in each file."""
import glob
import json
import statistics
import sys
from pathlib import Path

here = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "runs")
table = {}
for path in sorted(glob.glob(str(here / "*.round*.txt"))):
    side = Path(path).name.split(".")[0]
    for line in open(path):
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("op") not in ("quantize", "dequantize"):
            continue
        key = (rec["op"], rec["bits"], side)
        table.setdefault(key, []).append((rec["gbps"], rec["fraction_of_memcpy"]))
print("| op | bits | before GB/s | before of memcpy | after GB/s | after of memcpy | rounds |")
print("|---|---|---|---|---|---|---|")
for op in ("quantize", "dequantize"):
    for bits in (2, 4, 8):
        cells = []
        for side in ("before", "after"):
            runs = table.get((op, bits, side), [])
            gbps = [g for g, _ in runs]
            frac = [100 * f for _, f in runs]
            cells.append(f"{statistics.median(gbps):.2f} ({min(gbps):.2f}-{max(gbps):.2f})")
            cells.append(f"{statistics.median(frac):.1f}% ({min(frac):.1f}-{max(frac):.1f})")
        n = len(table.get((op, bits, "after"), []))
        print(f"| {op} | {bits} | " + " | ".join(cells) + f" | {n} |")
