"""Medians (min-max) of run.sh's SpMM times per cap and column count, and AVX-512's speed-up."""
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1])]
print("| columns | AVX2 s | AVX-512 s | AVX2 / AVX-512 (median of the rounds' ratios, min-max) |")
print("|---|---|---|---|")
for cols in sorted({r["cols"] for r in runs}):
    t = {cap: {r["round"]: r["spmm_s"] for r in runs if r["cols"] == cols and r["cap"] == cap}
         for cap in ("avx2", "avx512")}
    cell = {cap: "%.4f (%.4f-%.4f)" % (statistics.median(v.values()), min(v.values()),
                                       max(v.values())) for cap, v in t.items()}
    ratios = [t["avx2"][k] / t["avx512"][k] for k in t["avx2"] if k in t["avx512"]]
    print("| %d | %s | %s | %.2f (%.2f-%.2f) |" % (cols, cell["avx2"], cell["avx512"],
                                                  statistics.median(ratios), min(ratios),
                                                  max(ratios)))
