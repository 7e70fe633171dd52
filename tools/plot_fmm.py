#!/usr/bin/env python3
"""Error against time for the FMM and the Barnes-Hut tree, from fmm_benchmark's JSON lines
(samples/benchmarks/fmm_benchmark.cpp): one curve per FMM order over theta, one for the tree over
theta, median relative acceleration error against seconds per force calculation.

    tools/plot_fmm.py doc/fmm/h100x2_host_n2e20.jsonl --out doc/fmm/error_time_n2e20.png
"""
import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("-n", type=int, help="only the runs of this N (default: the first run's)")
    a = p.parse_args()
    runs = []
    for name in a.files:
        with open(name) as f:
            runs += [json.loads(l) for l in f if l.startswith('{"method"')]
    if not runs:
        sys.exit("plot_fmm: no runs in %s" % " ".join(a.files))
    n = a.n or runs[0]["n"]
    runs = [r for r in runs if r["n"] == n]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_fmm: matplotlib not found (apt install python3-matplotlib)")
    fig, ax = plt.subplots(figsize=(7, 5))
    curves = {}
    for r in runs:
        key = ("FMM, order %d" % r["order"]) if r["method"] == "fmm" else "tree, quadrupole"
        curves.setdefault(key, []).append(r)
    for key, rs in sorted(curves.items()):
        rs.sort(key=lambda r: r["theta"])
        ax.plot([r["seconds"] for r in rs], [r["median_error"] for r in rs], "o-" if "FMM" in key else "s--",
                label=key)
        for r in rs:
            ax.annotate("%.2g" % r["theta"], (r["seconds"], r["median_error"]), fontsize=7,
                        textcoords="offset points", xytext=(3, 3))
    for target in (1e-4, 1e-6):
        ax.axhline(target, color="grey", lw=0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds per force calculation")
    ax.set_ylabel("median relative acceleration error")
    ax.set_title("Plummer sphere, N = %d, %d threads (labels: theta)" % (n, runs[0]["threads"]))
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("plot_fmm: wrote", a.out)


if __name__ == "__main__":
    main()
