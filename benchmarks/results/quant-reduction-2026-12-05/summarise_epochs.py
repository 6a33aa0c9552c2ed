"""Per run and median (min-max) over the rounds: mean epoch time (the summary's, epochs 1-12), the
largest rank's peak RSS and mean quant_time_s over epochs 3-12, from DIR/{before,after}.round*/."""
import glob, json, statistics as st, sys
for side in ("before", "after"):
    ep, rss, q = [], [], []
    for d in sorted(glob.glob(f"{sys.argv[1]}/{side}.round*/metrics.jsonl")):
        recs = [json.loads(l) for l in open(d)]
        s = [r for r in recs if r.get("event") == "summary"][0]
        e = [r for r in recs if "rank" in r and r.get("epoch", 0) >= 3]
        ep.append(s["mean_epoch_time_s"])
        rss.append(max(r["peak_rss_bytes"] for r in e) / 2**20)
        q.append(st.mean(r["quant_time_s"] for r in e))
        print(f"{side} {d.split('/')[-2]}: epoch {ep[-1]:.4f} s, peak RSS {rss[-1]:.0f} MiB, quant {q[-1]:.4f} s")
    print(f"{side} median: epoch {st.median(ep):.4f} s ({min(ep):.4f}-{max(ep):.4f}), peak RSS "
          f"{st.median(rss):.0f} MiB ({min(rss):.0f}-{max(rss):.0f}), quant {st.median(q):.4f} s "
          f"({min(q):.4f}-{max(q):.4f})")
