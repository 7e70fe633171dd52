#!/usr/bin/env python3
"""Error against time for the FMM and the Barnes-Hut tree, from fmm_benchmark's and
fmm_gpu_benchmark's JSON lines (samples/benchmarks): one curve per method and FMM order over theta,
one per tree method over theta, median relative acceleration error against seconds per force
calculation. Methods: fmm (host), fmm_device (far field on the GPU, near field on the host),
fmm_gpu (far field and near field on the GPU), tree (host), tree_gpu (walk on the host, kernels
on the GPU).

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
    p.add_argument("--title", help="the plot's title")
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
        names = {"fmm": "FMM", "fmm_device": "FMM, far field on GPU", "fmm_gpu": "FMM on GPU",
                 "tree": "tree, quadrupole", "tree_gpu": "tree on GPU, quadrupole"}
        name = names.get(r["method"], r["method"])
        key = ("%s, order %d" % (name, r["order"])) if r["method"].startswith("fmm") else name
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
    ax.set_title(a.title or "Plummer sphere, N = %d, %d threads (labels: theta)" % (n, runs[0]["threads"]))
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("plot_fmm: wrote", a.out)


if __name__ == "__main__":
    main()
