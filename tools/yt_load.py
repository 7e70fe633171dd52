"""yt.load for grove's HDF5 snapshots, with the box and the units taken from the file.

yt 4.1 reads grove's snapshots with its GADGET HDF5 frontend (they are in GADGET-4's layout), which
takes neither the box nor the units from a non-cosmological file: it reads /Header/BoxSize only
as one length (a box of unequal sides, which grove writes as SWIFT does, three lengths, stops it),
puts an open box's (BoxSize 0) domain edges at None so that every plot fails, and ignores /Units,
taking kpc, 1e10 Msun and km/s instead. Its SWIFT frontend, which reads /Units, accepts only files
whose Header says Code = "SWIFT". So this helper reads them and passes them on:

    import sys; sys.path.insert(0, "tools")
    import yt_load
    ds = yt_load.load("sph_out/snapshot_final.hdf5")       # any yt.load keyword may be added
    yt.SlicePlot(ds, "z", ("gas", "density")).save()

- bounding_box: none for a periodic cube (BoxSize one length > 0: yt reads it, and keeps the box
  periodic); [0, L] on each axis of a periodic box of unequal sides (BoxSize's three lengths); for
  an open box (BoxSize 0), the particles' extent over every /PartTypeN/Coordinates, widened by a
  thousandth on each side (yt drops the particles outside the box). yt 4.1 treats a box given so
  as not periodic (it says so in a warning).
- unit_base: length, mass and velocity from /Units' "Unit length in cgs (U_L)", "Unit mass in
  cgs (U_M)" and "Unit time in cgs (U_t)".

Run as a program, it prints what yt made of a snapshot:  python3 tools/yt_load.py SNAPSHOT.hdf5
"""
import sys

import h5py
import numpy as np


def box_and_units(path):
    """The bounding_box (None: yt finds it) and unit_base that yt.load needs for the grove snapshot at
    path."""
    with h5py.File(path, "r") as f:
        if "Header" not in f or "BoxSize" not in f["Header"].attrs:
            raise ValueError(f"{path}: no /Header/BoxSize: not a snapshot in GADGET's layout")
        box = np.atleast_1d(np.asarray(f["Header"].attrs["BoxSize"], dtype="float64"))
        if box.size not in (1, 3):
            raise ValueError(f"{path}: /Header/BoxSize holds {box.size} values (1 or 3 expected)")
        one_length = box.size == 1
        box = box * np.ones(3)
        if one_length and box[0] > 0:
            bounding_box = None  # yt's GADGET reader takes GADGET's one length itself
        elif np.all(box > 0):
            bounding_box = [[0.0, float(b)] for b in box]
        elif np.all(box == 0):
            low, high = np.full(3, np.inf), np.full(3, -np.inf)
            for name in f:
                if name.startswith("PartType") and "Coordinates" in f[name] and len(f[name]["Coordinates"]):
                    pos = f[name]["Coordinates"][()]
                    low, high = np.minimum(low, pos.min(axis=0)), np.maximum(high, pos.max(axis=0))
            if not np.all(np.isfinite(low)):
                raise ValueError(f"{path}: an open box (BoxSize 0) without a particle: no box to give yt")
            margin = np.maximum(1e-3 * (high - low), 1e-12 * np.maximum(np.abs(low), np.abs(high)) + 1e-300)
            bounding_box = [[float(a), float(b)] for a, b in zip(low - margin, high + margin)]
        else:
            raise ValueError(f"{path}: /Header/BoxSize {list(box)} is neither a box nor open (0)")
        units = f["Units"].attrs if "Units" in f else {}

        def unit(name):
            if name not in units:
                raise ValueError(f"{path}: no /Units attribute '{name}'")
            return float(np.asarray(units[name]).reshape(-1)[0])

        length, mass, time = unit("Unit length in cgs (U_L)"), unit("Unit mass in cgs (U_M)"), \
            unit("Unit time in cgs (U_t)")
    unit_base = {"length": (length, "cm"), "mass": (mass, "g"), "velocity": (length / time, "cm/s")}
    return bounding_box, unit_base


def load(path, **kwargs):
    """yt.load(path) with the box and the units of the grove snapshot; keywords override them."""
    import yt
    bounding_box, unit_base = box_and_units(path)
    if bounding_box is not None:
        kwargs.setdefault("bounding_box", bounding_box)
    kwargs.setdefault("unit_base", unit_base)
    return yt.load(path, **kwargs)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: yt_load.py SNAPSHOT.hdf5")
    ds = load(sys.argv[1])
    ad = ds.all_data()
    print(f"{sys.argv[1]}: {type(ds).__name__}, t = {ds.current_time.to('s')}")
    print(f"domain {ds.domain_left_edge.to('cm')} to {ds.domain_right_edge.to('cm')}")
    print(f"units: length {ds.length_unit.to('cm')}, mass {ds.mass_unit.to('g')}, "
          f"velocity {ds.velocity_unit.to('cm/s')}")
    for ptype in sorted(ds.particle_types_raw):
        print(f"{ptype}: {ad[ptype, 'particle_mass'].size} particles")


if __name__ == "__main__":
    main()
