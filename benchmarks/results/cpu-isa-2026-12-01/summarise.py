"""Medians (min-max) over the alternated rounds of bench_quant's quantize and dequantize lines, per
ADAQP_MAX_CPU_ISA cap: runs/<isa>.round<N>.txt, one JSON line per (op, bits) in each file; each
line's own cpu_isa must be the cap it ran under (run.sh runs only the caps the CPU has)."""
import glob
import json
import statistics
import sys
from pathlib import Path

here = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "runs")
table = {}
for path in sorted(glob.glob(str(here / "*.round*.txt"))):
    isa = Path(path).name.split(".")[0]
    for line in open(path):
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("op") not in ("quantize", "dequantize"):
            continue
        assert rec["cpu_isa"] == isa, (path, rec["cpu_isa"])
        table.setdefault((rec["op"], rec["bits"], isa), []).append(
            (rec["gbps"], rec["fraction_of_memcpy"]))
isas = [i for i in ("avx512", "avx2", "scalar") if any(k[2] == i for k in table)]
print("| op | bits | " + " | ".join(f"{i} GB/s (of memcpy)" for i in isas) + " | rounds |")
print("|---|---|" + "---|" * len(isas) + "---|")
for op in ("quantize", "dequantize"):
    for bits in (2, 4, 8):
        cells = []
        for isa in isas:
            runs = table[(op, bits, isa)]
            g = [x for x, _ in runs]
            f = [100 * y for _, y in runs]
            cells.append(f"{statistics.median(g):.2f} ({min(g):.2f}-{max(g):.2f}), "
                         f"{statistics.median(f):.1f}% ({min(f):.1f}-{max(f):.1f})")
        n = min(len(table[(op, bits, isa)]) for isa in isas)
        print(f"| {op} | {bits} | " + " | ".join(cells) + f" | {n} |")
