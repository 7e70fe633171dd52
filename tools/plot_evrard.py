#!/usr/bin/env python3
"""Plot the Evrard collapse's energies against time: samples/evrard's energy CSV, overlaid on
tools/evrard_reference.py's 1-D solution when given.

  /usr/bin/python3 tools/plot_evrard.py evrard_out/energy.csv --reference evrard_reference.csv \
      --output doc/evrard/energies.png

Reads the files with the csv module (no h5py, no pandas); needs matplotlib. Prints the thermal
energy's peak and the final energies of each curve set.
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CURVES = [("kinetic", "kinetic", "tab:blue"), ("thermal", "thermal", "tab:red"),
          ("potential", "potential", "tab:green"), ("total", "total", "black")]


def read_columns(path):
    """The CSV's numeric columns by header name ('#' lines skipped)."""
    with open(path, newline="") as f:
        rows = [line for line in f if not line.startswith("#")]
    reader = csv.DictReader(rows)
    columns = {name: [] for name in reader.fieldnames}
    for row in reader:
        for name, value in row.items():
            columns[name].append(float(value))
    missing = [c for c in ["time"] + [c[0] for c in CURVES] if c not in columns]
    if missing:
        raise SystemExit(f"plot_evrard: {path} lacks the column(s) {', '.join(missing)}")
    return columns


def summary(label, c):
    k = max(range(len(c["time"])), key=lambda i: c["thermal"][i])
    e0 = c["total"][0]
    drift = max(abs(e - e0) for e in c["total"]) / abs(e0)
    return (f"{label}: thermal peak {c['thermal'][k]:.4f} at t = {c['time'][k]:.3f}; at t = {c['time'][-1]:.3f} "
            f"K = {c['kinetic'][-1]:.4f}  U = {c['thermal'][-1]:.4f}  W = {c['potential'][-1]:.4f}  "
            f"E = {c['total'][-1]:.5f}; largest |E - E0| / |E0| = {drift:.2e}")


def main():
    ap = argparse.ArgumentParser(description="Evrard collapse energies against time")
    ap.add_argument("energy", help="samples/evrard's energy CSV")
    ap.add_argument("--reference", help="tools/evrard_reference.py's CSV (drawn as dashed curves)")
    ap.add_argument("--label", default="grove SPH", help="legend label of the sample's curves")
    ap.add_argument("--output", default="evrard_energies.png")
    ap.add_argument("--dpi", type=int, default=110)
    args = ap.parse_args()

    sph = read_columns(args.energy)
    ref = read_columns(args.reference) if args.reference else None
    fig, ax = plt.subplots(figsize=(7.0, 5.2))
    for name, label, color in CURVES:
        ax.plot(sph["time"], sph[name], color=color, lw=1.6, label=f"{label} ({args.label})")
        if ref:
            ax.plot(ref["time"], ref[name], color=color, lw=1.0, ls="--", label=f"{label} (1-D reference)")
    ax.axhline(0.0, color="0.7", lw=0.6)
    ax.set_xlabel(r"$t\ [(R^3/GM)^{1/2}]$")
    ax.set_ylabel(r"energy $[GM^2/R]$")
    ax.set_xlim(0.0, max(sph["time"][-1], ref["time"][-1] if ref else 0.0))
    ax.set_title("Evrard collapse")
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    fig.tight_layout()
    fig.savefig(args.output, dpi=args.dpi)
    print(summary(args.label, sph))
    if ref:
        print(summary("1-D reference", ref))
    print(f"written {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
