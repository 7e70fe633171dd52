#!/usr/bin/env python3
"""Error against time per step for the GPU-resident tree, from resident_benchmark's JSON lines
(samples/benchmarks/gpu): one curve per moment and opening rule over theta, median relative force
error against the step's median time, rebuilt steps (solid) and list-reuse steps (dashed), the
p99 error beside each point as a thin vertical bar up to it. Points of other codes ("anchors") are
added with --anchor LABEL,MS,MEDIAN (repeatable), e.g. a code measured side by side, and targets
(a time at an error) with --target LABEL,MS,MEDIAN.

    tools/plot_resident_accuracy.py doc/resident/h100x1_n2e22_run146.jsonl \\
        --anchor "Ryoanji (H100, walk+force+tree),43.9,7.1e-4" --target "target,8,1e-3" \\
        --out doc/resident/error_time_n2e22.png
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--anchor", action="append", default=[], help="LABEL,MS,MEDIAN: another code's point")
    p.add_argument("--target", action="append", default=[], help="LABEL,MS,MEDIAN: a target to reach")
    p.add_argument("--title", help="the plot's title")
    a = p.parse_args()
    runs = []
    for name in a.files:
        with open(name) as f:
            runs += [json.loads(l) for l in f if l.startswith('{"bench":"resident"')]
    runs = [r for r in runs if r.get("median_error", -1) > 0]
    if not runs:
        sys.exit("plot_resident_accuracy: no resident_benchmark lines with errors in %s" % " ".join(a.files))
    def points(option, texts):
        out = []
        for text in texts:
            parts = text.rsplit(",", 2)
            if len(parts) != 3:
                sys.exit("plot_resident_accuracy: --%s wants LABEL,MS,MEDIAN, got %r" % (option, text))
            try:
                out.append((parts[0], float(parts[1]), float(parts[2])))
            except ValueError:
                sys.exit("plot_resident_accuracy: --%s %r: MS and MEDIAN must be numbers" % (option, text))
        return out

    anchors, targets = points("anchor", a.anchor), points("target", a.target)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_resident_accuracy: matplotlib not found (apt install python3-matplotlib)")

    curves = {}
    for r in runs:
        key = (r["moment"], r.get("opening", "fdps"), r["mode"])
        curves.setdefault(key, []).append(r)
    colours = {("monopole", "fdps"): "tab:blue", ("monopole", "rmax"): "tab:cyan",
               ("monopole", "nakasato"): "tab:purple", ("quadrupole", "fdps"): "tab:red",
               ("quadrupole", "rmax"): "tab:orange", ("quadrupole", "nakasato"): "tab:brown"}
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    for (moment, opening, mode), points in sorted(curves.items()):
        points.sort(key=lambda r: r["theta"])
        ms = [r["step_ms_median"] for r in points]
        err = [r["median_error"] for r in points]
        colour = colours.get((moment, opening), "black")
        style = "-" if mode == "rebuild" else "--"
        label = "%s, %s opening, %s" % (moment, "FDPS" if opening == "fdps" else opening, "rebuilt" if mode == "rebuild" else "reused")
        ax.plot(ms, err, style, marker="o" if mode == "rebuild" else "s", color=colour, label=label, markersize=4)
        if mode == "rebuild":
            for r in points:
                ax.vlines(r["step_ms_median"], r["median_error"], r["p99_error"], color=colour, alpha=0.25)
                ax.annotate("%.2g" % r["theta"], (r["step_ms_median"], r["median_error"]), fontsize=6,
                            xytext=(3, -8), textcoords="offset points", color=colour)
    for label, ms, median in anchors:
        ax.plot([ms], [median], marker="*", markersize=12, color="black", linestyle="none")
        ax.annotate(label, (ms, median), fontsize=7, xytext=(5, 4), textcoords="offset points")
    for label, ms, median in targets:
        ax.plot([ms], [median], marker="D", markersize=8, markerfacecolor="none", color="green", linestyle="none")
        ax.annotate(label, (ms, median), fontsize=7, xytext=(5, -10), textcoords="offset points", color="green")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time per step (ms, median over the steps)")
    ax.set_ylabel("median relative force error (bars: up to the p99)")
    r0 = runs[0]
    ax.set_title(a.title or "GPU-resident tree, N = %d, leaf %d, group %d, %s" % (r0["n"], r0["leaf"], r0["group"], r0["gpu"]),
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out, dpi=130)
    print("wrote %s (%d runs, %d curves, %d anchors, %d targets)" % (a.out, len(runs), len(curves), len(anchors),
                                                                      len(targets)))


if __name__ == "__main__":
    main()
