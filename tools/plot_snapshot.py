#!/usr/bin/env python3
"""A projected-density slice of an HDF5 snapshot (grove::io, GADGET-4/SWIFT layout) as a PNG.

    tools/plot_snapshot.py nbody_out/snapshot_00128.hdf5 [-o slice.png] [--axis z] [--width 0.1]
                           [--part-type 0] [--bins 256]

Bodies within --width (a fraction of the extent) of the middle plane normal to --axis are
binned by mass on a square grid and shown on a log scale; the title gives the time and count.
Needs h5py, numpy and matplotlib (Debian: python3-h5py python3-matplotlib).
"""
import argparse

import h5py
import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("snapshot")
    p.add_argument("-o", "--output", help="PNG to write (default: the snapshot's name with .png)")
    p.add_argument("--axis", choices="xyz", default="z", help="the slice's normal")
    p.add_argument("--width", type=float, default=0.1, help="slab thickness, as a fraction of the extent")
    p.add_argument("--part-type", type=int, help="PartTypeN to draw (default: the first the file holds)")
    p.add_argument("--bins", type=int, help="pixels per side (default: about sqrt of the bodies in the slab)")
    a = p.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with h5py.File(a.snapshot, "r") as f:
        time = float(f["Header"].attrs["Time"])
        part_type = a.part_type
        if part_type is None:
            part_type = next(k for k in range(6) if f"PartType{k}" in f)
        group = f[f"PartType{part_type}"]
        x = group["Coordinates"][:]
        m = group["Masses"][:] if "Masses" in group else np.ones(len(x))
    normal = "xyz".index(a.axis)
    plane = [k for k in range(3) if k != normal]
    low, high = x.min(axis=0), x.max(axis=0)
    middle = 0.5 * (low[normal] + high[normal])
    half = 0.5 * a.width * (high[normal] - low[normal])
    inside = np.abs(x[:, normal] - middle) <= half
    bins = a.bins or int(np.clip(np.sqrt(inside.sum()), 32, 512))
    grid, ex, ey = np.histogram2d(x[inside, plane[0]], x[inside, plane[1]], bins=bins,
                                  range=[[low[plane[0]], high[plane[0]]], [low[plane[1]], high[plane[1]]]],
                                  weights=m[inside])
    fig, ax = plt.subplots(figsize=(6, 5.4))
    with np.errstate(divide="ignore"):
        shown = np.where(grid.T > 0, np.log10(grid.T), np.nan)  # empty pixels apart from the colours
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("black")
    image = ax.imshow(shown, origin="lower", extent=[ex[0], ex[-1], ey[0], ey[-1]], cmap=cmap, aspect="equal")
    fig.colorbar(image, ax=ax, label="log10 mass per pixel")
    ax.set_xlabel("xyz"[plane[0]])
    ax.set_ylabel("xyz"[plane[1]])
    ax.set_title(f"t = {time:.4g}: {inside.sum()} of {len(x)} bodies\nwithin {half:.3g} of {a.axis} = {middle:.3g}", fontsize=10)
    out = a.output or a.snapshot.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(out)


if __name__ == "__main__":
    main()
