"""PNG plots of the reproduction, drawn by gnuplot (pngcairo): accuracy against wall-clock time
per mode, the stacked time breakdown, and the adaptive bit-width histograms."""

import subprocess
from pathlib import Path

from report import MODE_TITLES

TERMINAL = "set terminal pngcairo size 1200,640 font 'Sans,10'\n"


def _gnuplot(out, name, script, data):
    """Writes name.dat and name.gp under out/plots-src and draws out/name.png."""
    src = Path(out) / "plots-src"
    src.mkdir(exist_ok=True)
    dat = src / (name + ".dat")
    dat.write_text(data)
    png = Path(out) / (name + ".png")
    gp = src / (name + ".gp")
    gp.write_text(TERMINAL + "set output '%s'\n" % png + script.replace("DATA", "'%s'" % dat))
    subprocess.run(["gnuplot", str(gp)], check=True)
    return png


def accuracy_vs_time(out, curves):
    pngs = []
    for dataset in sorted({c["dataset"] for c in curves}):
        blocks, titles = [], []
        for mode in MODE_TITLES:
            rows = [c for c in curves if c["dataset"] == dataset and c["mode"] == mode]
            if rows:
                blocks.append("\n".join("%g %g" % (c["time_s"], c["test_acc"]) for c in rows))
                titles.append(MODE_TITLES[mode])
        plot = ", ".join("DATA index %d using 1:2 with lines lw 2 title '%s'" % (i, t)
                         for i, t in enumerate(titles))
        script = ("set title 'Test accuracy against wall-clock time: %s, GCN "
                  "(time = epoch x measured epoch time on the virtual cluster)'\n"
                  "set xlabel 'seconds'\nset ylabel 'test accuracy (%%)'\nset key bottom right\n"
                  "set grid\nplot %s\n" % (dataset, plot))
        pngs.append(_gnuplot(out, "accuracy_vs_time_" + dataset, script, "\n\n\n".join(blocks)))
    return pngs


def breakdown(out, tp, calibrated):
    pngs = []
    for dataset in sorted({r["dataset"] for r in tp}):
        rows = [r for r in tp if r["dataset"] == dataset and
                r["bandwidth_mbit"] == calibrated[r["workers"]]]
        if not rows:
            continue
        data = "\n".join('"%s W%d %s" %g %g %g %g' % (
            r["model"], r["workers"], MODE_TITLES[r["mode"]], r["compute_s"],
            r["exposed_comm_s"], r["reduce_s"], r["assign_s"]) for r in rows)
        script = ("set title 'Epoch time breakdown, slowest rank: %s at the calibrated bandwidth'\n"
                  "set style data histograms\nset style histogram rowstacked\n"
                  "set style fill solid 0.8 border -1\nset boxwidth 0.7\nset ylabel 'seconds'\n"
                  "set xtics rotate by -40\nset key top left\nset grid ytics\n"
                  "plot DATA using 2:xtic(1) title 'compute', '' using 3 title 'exposed "
                  "communication', '' using 4 title 'reduce', '' using 5 title 'assignment'\n"
                  % dataset)
        pngs.append(_gnuplot(out, "breakdown_" + dataset, script, data))
    return pngs


def bit_histograms(out, bits, calibrated):
    rows = [b for b in bits if b["mode"] == "adaqp" and
            b["bandwidth_mbit"] == calibrated[b["workers"]]]
    if not rows:
        return []
    data = "\n".join('"%s %s W%d L%d %s" %g %g %g %g' % (
        b["dataset"], b["model"], b["workers"], b["layer"], b["direction"], b["share_2"],
        b["share_4"], b["share_8"], b["share_32"]) for b in rows)
    script = ("set title 'Adaptive bit-widths (AdaQP, calibrated bandwidth): share of messages'\n"
              "set style data histograms\nset style histogram rowstacked\n"
              "set style fill solid 0.8 border -1\nset boxwidth 0.7\nset yrange [0:1]\n"
              "set xtics rotate by -40\nset key outside right\n"
              "plot DATA using 2:xtic(1) title '2 bits', '' using 3 title '4 bits', '' using 4 "
              "title '8 bits', '' using 5 title 'full precision'\n")
    return [_gnuplot(out, "bit_widths", script, data)]


def draw(out, tables):
    """Draws every plot; returns the PNG paths."""
    return (accuracy_vs_time(out, tables["curves"]) +
            breakdown(out, tables["tp"], tables["calibrated"]) +
            bit_histograms(out, tables["bits"], tables["calibrated"]))
