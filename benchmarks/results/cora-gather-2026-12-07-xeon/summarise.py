"""Per-run median epoch (rank 0's records, epochs 11-200) of an archive's <prefix>-<build>-<round> runs.

Usage: python3 summarise.py [ARCHIVE]  (default runs.tgz; runs-scratch.tgz: the scratch build's rounds)
"""
import io
import json
import os
import statistics as st
import sys
import tarfile

here = os.path.dirname(os.path.abspath(__file__))
runs = {}
archive = sys.argv[1] if len(sys.argv) > 1 else "runs.tgz"
with tarfile.open(os.path.join(here, archive)) as tar:
    for m in tar.getmembers():
        if not m.name.endswith("metrics.jsonl"):
            continue
        name = m.name.split("/")[0]
        _, build, rnd = name.split("-")
        eps = [json.loads(line) for line in io.TextIOWrapper(tar.extractfile(m))]
        eps = [e for e in eps if e.get("rank") == 0 and "epoch_time_s" in e]
        kept = sum(1 for e in eps if e.get("assign_vanilla_schedule"))
        runs[(build, int(rnd))] = (st.median(e["epoch_time_s"] for e in eps[10:]), kept)
rounds = sorted({r for _, r in runs})
builds = sorted({b for b, _ in runs}, key=lambda b: b == "vanilla")
for build in builds:
    row = [runs[(build, r)] for r in rounds]
    print(build, " ".join(f"{t:.5f}/V{k}" for t, k in row), f"median {st.median(t for t, _ in row):.5f}")
for build in builds[:-1]:
    ratios = [runs[(build, r)][0] / runs[("vanilla", r)][0] for r in rounds]
    print(build, "/ vanilla per round", " ".join(f"{x:.2f}" for x in ratios), f"median {st.median(ratios):.3f}")
