#!/usr/bin/env python3
"""Plots the relative energy error of a samples/nbody run: tools/plot_energy.py OUTPUT_DIR [PNG]."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out_dir = sys.argv[1]
    png = sys.argv[2] if len(sys.argv) > 2 else f"{out_dir}/energy_error.png"
    with open(f"{out_dir}/energy.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"{out_dir}/energy.csv has no steps")
        return 1
    time = [float(r["time"]) for r in rows]
    error = [abs(float(r["relative_error"])) for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(time, [max(e, 1e-16) for e in error])
    ax.set_xlabel("time (N-body units)")
    ax.set_ylabel("|E(t) - E(0)| / |E(0)|")
    ax.set_title("grove nbody: relative energy error")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
