"""Summarises benchmarks/links' runs.jsonl: per (rate, model, W, mode) the median epoch of the
rounds with their minimum and maximum, each mode's median over Vanilla's (and Vanilla's over it,
the speed-up), and the median (with minimum and maximum) of each round's ratio to that round's
Vanilla run; cells of fewer rounds than the file holds are marked [n/N], and run folders without a
line in the file are named; writes summary.json
and summary.md beside the runs, prints the table, and plots AdaQP / Vanilla against the link rate
(adaqp_vs_vanilla.png, gnuplot, when it is installed).

Usage: summarise.py RUNS_JSONL OUT_DIR
"""
import json
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

TITLES = {"vanilla": "Vanilla", "adaqp-q": "AdaQP-q", "adaqp-p": "AdaQP-p", "adaqp": "AdaQP",
          "adaqp-baseline": "AdaQP (baseline build)", "vanilla-baseline": "Vanilla (baseline build)",
          "adaqp-paper": "AdaQP (paper's objective)",
          "adaqp-inline": "AdaQP (solve inline)", "adaqp-background": "AdaQP (solve beside)"}


def rate_mbit(rate):
    """Link rate in Mbit/s (shared memory and the GPU's NCCL sockets: None)."""
    if rate in ("shm", "gpu"):
        return None
    for unit, scale in (("gbit", 1000.0), ("mbit", 1.0), ("kbit", 1e-3)):
        if rate.endswith(unit):
            return float(rate[:-len(unit)]) * scale
    raise ValueError("rate %r" % rate)


def rate_order(rate):
    m = rate_mbit(rate)
    return float("inf") if m is None else m


def mode_table(rows, keep, head, cells):
    """The lines of a table of the rows `keep` selects, one per (model, W, link, mode): the link,
    model, W and mode, then the columns `head` of `cells(row)`; none when no row is selected."""
    chosen = sorted((r for r in rows if keep(r)),
                    key=lambda r: (r["model"], r["workers"], rate_order(r["rate"]), r["mode"]))
    if not chosen:
        return []
    lines = ["", "| link | model | W | mode | " + " | ".join(head) + " |",
             "|" + "---|" * (4 + len(head))]
    for r in chosen:
        lines.append("| %s | %s | %d | %s | %s |" % (r["rate"], r["model"], r["workers"],
                                                     TITLES[r["mode"]], " | ".join(cells(r))))
    return lines


def main():
    runs = [json.loads(line) for line in open(sys.argv[1])]
    out = Path(sys.argv[2])
    groups = defaultdict(list)
    for r in runs:
        groups[(r["rate"], r["model"], r["workers"], r["mode"])].append(r)
    rows = []
    for (rate, model, w, mode), rs in groups.items():
        t = [r["epoch_s"] for r in rs]
        rows.append({"rate": rate, "model": model, "workers": w, "mode": mode, "rounds": len(rs),
                     "median_epoch_s": statistics.median(t), "min_epoch_s": min(t),
                     "max_epoch_s": max(t),
                     "bytes_per_epoch": statistics.median(r["bytes_per_epoch"] for r in rs),
                     "quant_s": statistics.median(r["quant_s"] for r in rs),
                     "assign_s": statistics.median(r["assign_s"] for r in rs),
                     # Rows of runs before 2026-12-06 lack these two.
                     "compute_s": statistics.median(r.get("compute_s", 0.0) for r in rs),
                     "codec_setup_s": statistics.median(r.get("codec_setup_s", 0.0) for r in rs),
                     "full_share": statistics.median(r.get("width_shares", {}).get("32", 0)
                                                     for r in rs),
                     "same_host_bytes": statistics.median(r.get("same_host_bytes_per_epoch", 0)
                                                          for r in rs),
                     "same_host_full_precision_bytes": statistics.median(
                         r.get("same_host_full_precision_bytes_per_epoch", 0) for r in rs)})
    # A baseline build's modes are set against the baseline's Vanilla where it ran.
    def own_vanilla(mode):
        has_base = any(r["mode"] == "vanilla-baseline" for r in rows)
        return "vanilla-baseline" if mode.endswith("-baseline") and has_base else "vanilla"

    base = {(r["rate"], r["model"], r["workers"], r["mode"]): r for r in rows}
    for r in rows:
        v = base.get((r["rate"], r["model"], r["workers"], own_vanilla(r["mode"])))
        r["vs_vanilla"] = r["median_epoch_s"] / v["median_epoch_s"] if v else None
    # Each round runs every mode of a cell back to back: the ratio to the same round's Vanilla
    # cancels what drifts between rounds (on a shared 2-core machine the rounds' medians spread by
    # 20-30%, more than the modes differ).
    vanilla_runs = {(r["mode"], r["round"], r["rate"], r["model"], r["workers"]): r["epoch_s"]
                    for r in runs if r["mode"] in ("vanilla", "vanilla-baseline")}
    for r in rows:
        paired = [x["epoch_s"] / vanilla_runs[k] for x in groups[
            (r["rate"], r["model"], r["workers"], r["mode"])]
            for k in [(own_vanilla(r["mode"]), x["round"], x["rate"], x["model"], x["workers"])]
            if k in vanilla_runs]
        r["paired_rounds"] = len(paired)
        r["paired_vs_vanilla"] = statistics.median(paired) if paired else None
        r["paired_min"] = min(paired) if paired else None
        r["paired_max"] = max(paired) if paired else None
    # A cell of fewer rounds than the file holds (a run cut short or failed) is marked, as is a
    # run folder beside the file that has no line in it.
    all_rounds = len({r["round"] for r in runs})
    short = any(r["rounds"] < all_rounds for r in rows)

    def rounds_mark(r):
        return " [%d/%d]" % (r["rounds"], all_rounds) if r["rounds"] < all_rounds else ""

    listed = {Path(r["run_dir"]).name for r in runs if "run_dir" in r}
    unlisted = sorted(d.name for d in out.glob("r[0-9]*-*") if d.is_dir() and d.name not in listed)
    for name in unlisted:
        print("summarise.py: %s has no line in %s (a run that did not finish?)"
              % (out / name, sys.argv[1]), file=sys.stderr)
    modes = [m for m in TITLES if any(r["mode"] == m for r in rows)]
    head = ["link", "model", "W"] + ["%s s (min-max)" % TITLES[m] for m in modes] + \
        ["%s / %s" % (TITLES[m], TITLES[own_vanilla(m)]) for m in modes if m != own_vanilla(m)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = sorted({(r["rate"], r["model"], r["workers"]) for r in rows},
                  key=lambda k: (k[1], k[2], rate_order(k[0])))
    by = {(r["rate"], r["model"], r["workers"], r["mode"]): r for r in rows}
    for rate, model, w in keys:
        cells = [{"shm": "shared memory", "gpu": "one GPU, NCCL sockets"}.get(rate, rate), model,
                 str(w)]
        for m in modes:
            r = by.get((rate, model, w, m))
            cells.append("%.3f (%.3f-%.3f)%s" % (r["median_epoch_s"], r["min_epoch_s"],
                                                r["max_epoch_s"], rounds_mark(r)) if r else "")
        for m in modes:
            if m == own_vanilla(m):
                continue
            r = by.get((rate, model, w, m))
            # The speed-up from the unrounded medians (a README copies it, not recomputes it).
            cells.append("%.2f (%.2fx)" % (r["vs_vanilla"], 1 / r["vs_vanilla"])
                         if r and r["vs_vanilla"] else "")
        lines.append("| " + " | ".join(cells) + " |")
    if short:
        lines += ["", "[n/N]: the median of the n rounds that cell holds, of the N in %s."
                  % Path(sys.argv[1]).name]
    if unlisted:
        lines += ["", "Run folders without a line in %s (not counted): %s."
                  % (Path(sys.argv[1]).name, ", ".join(unlisted))]
    def paired_mark(r):
        n = r["paired_rounds"]
        return " [%d/%d]" % (n, all_rounds) if n < all_rounds else ""

    lines += mode_table(rows, lambda r: r["mode"] != own_vanilla(r["mode"]) and r["paired_vs_vanilla"],
                        ["median of the rounds' ratios to their own Vanilla run (min-max)"],
                        lambda r: ["%.2f (%.2f-%.2f)%s" % (r["paired_vs_vanilla"], r["paired_min"],
                                                           r["paired_max"], paired_mark(r))])
    # The width scheme's time on the epoch's thread (assign_time_s): all of the solve inline, the
    # copy of its inputs and the wait for the solve with the background solve; and the statistics
    # after the epoch (since 746fa04).
    lines += mode_table(rows, lambda r: r["assign_s"] > 0,
                        ["adaptive scheme on the epoch's thread s", "of the epoch"],
                        lambda r: ["%.4f" % r["assign_s"],
                                   "%.1f%%" % (100 * r["assign_s"] / r["median_epoch_s"])])
    # The compute besides the width scheme (compute_time_s - assign_time_s, the slowest rank's per
    # epoch) against the same Vanilla run's, and the codecs' parts of it: set-up on the epoch's
    # thread (codec_setup_time_s: tables for new widths, buffers) and quantizing (quant_time_s).
    def compute_cells(r):
        v = by.get((r["rate"], r["model"], r["workers"], own_vanilla(r["mode"])))
        ratio = "%.2f" % (r["compute_s"] / v["compute_s"]) if v and v["compute_s"] > 0 else ""
        return ["%.4f" % r["compute_s"], ratio, "%.4f" % r["codec_setup_s"], "%.4f" % r["quant_s"]]
    lines += mode_table(rows, lambda r: r["compute_s"] > 0,
                        ["compute without the scheme s", "of Vanilla's", "codec set-up s",
                         "quantizing s"], compute_cells)
    # Links of two speeds (RANKS_PER_HOST > 1): what crossed a host's shared memory, and how much
    # of it at full precision.
    lines += mode_table(rows, lambda r: r["same_host_bytes"] > 0,
                        ["MB sent per epoch", "to the own host", "of it at full precision"],
                        lambda r: ["%.1f" % (r["bytes_per_epoch"] / 1e6),
                                   "%.1f" % (r["same_host_bytes"] / 1e6),
                                   "%.0f%%" % (100 * r["same_host_full_precision_bytes"]
                                               / r["same_host_bytes"])])
    (out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(out, rows, keys)


def plot(out, rows, keys):
    if shutil.which("gnuplot") is None:
        return
    series = sorted({(k[1], k[2]) for k in keys})
    rated = sorted({k[0] for k in keys if rate_mbit(k[0]) is not None}, key=rate_order)
    # Shared memory is drawn one decade right of the fastest shaped rate.
    xs = {rate: rate_mbit(rate) for rate in rated}
    for i, special in enumerate(r for r in ("shm", "gpu") if any(k[0] == r for k in keys)):
        xs[special] = 10 ** (i + 1) * max(xs.values()) if xs else 10 ** (i + 1)
    blocks, titles = [], []
    for model, w in series:
        for mode in ("adaqp", "adaqp-paper"):
            pts = [(xs[r["rate"]], r["vs_vanilla"]) for r in rows
                   if r["model"] == model and r["workers"] == w and r["mode"] == mode
                   and r["vs_vanilla"]]
            if not pts:
                continue
            blocks.append("\n".join("%g %g" % p for p in sorted(pts)))
            titles.append("%s W=%d %s" % (model, w, TITLES[mode]))
    if not blocks:
        return
    data = out / "adaqp_vs_vanilla.dat"
    data.write_text("\n\n\n".join(blocks) + "\n")
    tics = ", ".join('"%s" %g' % (r if rate_mbit(r) is None else "%g" % x, x)
                     for r, x in xs.items())
    script = ("set terminal pngcairo size 900,560\nset output '%s'\nset logscale x\n"
              "set xtics (%s)\nset xlabel 'link rate (Mbit/s; shm: shared memory)'\n"
              "set ylabel 'epoch time / Vanilla'\nset key top left\nset grid\n"
              "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2\n"
              "plot %s\n" % (
                  out / "adaqp_vs_vanilla.png", tics,
                  ", ".join("'%s' index %d with linespoints title \"%s\"" % (data, i, t)
                            for i, t in enumerate(titles))))
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
