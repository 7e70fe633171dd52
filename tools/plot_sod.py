#!/usr/bin/env python3
"""Plots a samples/sph shock-tube run against the exact solution.

  tools/plot_sod.py OUTPUT_DIR [PNG]      (default PNG: OUTPUT_DIR/sod.png)

Reads OUTPUT_DIR/profiles.csv (binned density, x-velocity and pressure) and draws them over the
exact Riemann solution of tools/sod_exact.py, shading the window 0.25 <= x < 0.75 where the
sample computes its L1 errors.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sod_exact import Riemann, periodic_tube, read_profiles  # noqa: E402


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out_dir = sys.argv[1]
    png = sys.argv[2] if len(sys.argv) > 2 else f"{out_dir}/sod.png"
    time, rows = read_profiles(out_dir)
    rows = [r for r in rows if r["count"] > 0]
    solver = Riemann()
    xs = [(k + 0.5) / 2000 for k in range(2000)]
    exact = [periodic_tube(solver, x, time) for x in xs]
    fig, axes = plt.subplots(3, 1, figsize=(7, 9), sharex=True)
    panels = (("density", "density", 0), ("velocity_x", "velocity x", 1), ("pressure", "pressure", 2))
    for ax, (column, label, q) in zip(axes, panels):
        ax.axvspan(0.25, 0.75, color="0.93", zorder=0)
        ax.plot(xs, [e[q] for e in exact], color="k", lw=1.2, label="exact")
        ax.plot([r["x"] for r in rows], [r[column] for r in rows], "o", ms=3, color="tab:red", label="grove SPH (binned)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="upper right")
    axes[0].set_title(f"3-D Sod shock tube, t = {time:.3f} (shaded: compared window)")
    axes[-1].set_xlabel("x")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
