"""Per run: the mean over epochs 3-8 of the slower rank's epoch, and the larger rank's peak RSS.
Per configuration: every round, the median, and the median of each round's after/before ratio."""
import collections
import glob
import json
import statistics as st
import sys

base = sys.argv[1] if len(sys.argv) > 1 else "/work/prof/ck"
runs = {}
for d in sorted(glob.glob(base + "/w*-*-*-*")):
    if d.endswith(".time"):
        continue
    w, mode, version, rnd = d.split("/")[-1].split("-")
    try:
        rows = [json.loads(line) for line in open(d + "/metrics.jsonl")]
    except FileNotFoundError:
        continue
    epochs = collections.defaultdict(float)
    for x in rows:
        if "epoch_time_s" in x and x["epoch"] >= 3:
            epochs[x["epoch"]] = max(epochs[x["epoch"]], x["epoch_time_s"])
    summary = [x for x in rows if x.get("event") == "summary"]
    if not summary or not epochs:
        continue
    peak = max(p[3] for p in summary[0]["memory"]["peak_rss_bytes"]) / 2**20
    runs[(w, mode, version, rnd)] = (st.mean(epochs.values()), peak)

for w, mode in sorted({(k[0], k[1]) for k in runs}):
    line = [f"{w} {mode}:"]
    for version in ("before", "after"):
        v = sorted((k[3], t) for k, t in runs.items() if k[:3] == (w, mode, version))
        times = [t[0] for _, t in v]
        peaks = [t[1] for _, t in v]
        if times:
            line.append(f"{version} {st.median(times):.3f} s ({' '.join(f'{x:.3f}' for x in times)}),"
                        f" peak {st.median(peaks):.0f} MiB;")
    ratios = [runs[(w, mode, "after", r)][0] / runs[(w, mode, "before", r)][0]
              for r in "123" if (w, mode, "after", r) in runs and (w, mode, "before", r) in runs]
    if ratios:
        line.append(f"after/before per round {st.median(ratios):.2f}"
                    f" ({min(ratios):.2f}-{max(ratios):.2f})")
    print(" ".join(line))

# AdaQP against Vanilla at W=2, each build, per round.
for version in ("before", "after"):
    r = [runs[("w2", "adaqp", version, n)][0] / runs[("w2", "vanilla", version, n)][0]
         for n in "123" if ("w2", "adaqp", version, n) in runs and ("w2", "vanilla", version, n) in runs]
    if r:
        print(f"W=2 AdaQP/Vanilla, {version}: per round {' '.join(f'{x:.2f}' for x in r)},"
              f" median {st.median(r):.2f}")
