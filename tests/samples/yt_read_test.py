"""yt reads the samples' HDF5 snapshots (through its GADGET HDF5 reader), as a user would.

Runs samples/nbody and samples/sph for a few steps, then loads each snapshot with no argument
written by hand, through tools/yt_load.py (yt's GADGET reader takes neither the box nor the units
from a non-cosmological file; the helper reads them from the snapshot): every particle there and
inside the box, the units the file's /Units, the fields equal to the file's (h5py), and for the
gas yt's own SPH fields (density, smoothing length) and a density slice drawn by yt's SPH
deposition.

usage: yt_read_test.py MPIEXEC NBODY SPH WORKDIR   (registered only where yt imports)
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import yt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import yt_load  # noqa: E402

yt.set_log_level(40)


def check_units(ds, path):
    """yt's code units are the snapshot's /Units."""
    with h5py.File(path, "r") as f:
        u = f["Units"].attrs
        length, mass, time = (float(u[k]) for k in ("Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
                                                      "Unit time in cgs (U_t)"))
    assert np.isclose(ds.length_unit.to("cm").value, length, rtol=1e-12), ds.length_unit
    assert np.isclose(ds.mass_unit.to("g").value, mass, rtol=1e-12), ds.mass_unit
    assert np.isclose(ds.velocity_unit.to("cm/s").value, length / time, rtol=1e-12), ds.velocity_unit


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr


def main():
    mpiexec, nbody, sph, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run([mpiexec, "-np", "1", nbody, "-n", "4096", "--t-end", "0.0078125", "--dt", "0.0078125", "-o", "nbody"], work)
    run([mpiexec, "-np", "1", sph, "--nx", "48", "--n-ngb", "50", "--max-steps", "2", "-o", "sph"], work)

    # Bodies (PartType1) of an open box: the helper puts a box around them.
    path = os.path.join(work, "nbody", "snapshot_00001.hdf5")
    with h5py.File(path, "r") as f:
        pos = f["PartType1/Coordinates"][:]
        mass = f["PartType1/Masses"][:]
    ds = yt_load.load(path)
    check_units(ds, path)
    low, high = ds.domain_left_edge.to("cm").value, ds.domain_right_edge.to("cm").value
    assert np.all(low < pos.min(axis=0)) and np.all(pos.max(axis=0) < high), (low, high)
    ad = ds.all_data()
    got = ad["PartType1", "particle_mass"].to("g").value
    assert got.size == 4096, got.size
    assert np.isclose(got.sum(), mass.sum(), rtol=1e-12), (got.sum(), mass.sum())

    # Gas (PartType0) in the shock tube's box: yt's SPH fields under GADGET's names.
    path = os.path.join(work, "sph", "snapshot_final.hdf5")
    with h5py.File(path, "r") as f:
        box = np.atleast_1d(f["Header"].attrs["BoxSize"]) * np.ones(3)
        density = np.sort(f["PartType0/Density"][:])
        hsml = np.sort(f["PartType0/SmoothingLength"][:])
    ds = yt_load.load(path)
    check_units(ds, path)
    assert np.array_equal(ds.domain_right_edge.to("cm").value, box) and not np.any(ds.domain_left_edge), \
        (ds.domain_left_edge, ds.domain_right_edge, box)
    ad = ds.all_data()
    yt_density = np.sort(ad["PartType0", "density"].to("g/cm**3").value)
    yt_hsml = np.sort(ad["PartType0", "smoothing_length"].to("cm").value)
    assert yt_density.size == density.size, (yt_density.size, density.size)
    assert np.array_equal(yt_density, density), "yt's density is not the file's"
    assert np.array_equal(yt_hsml, hsml), "yt's smoothing length is not the file's"
    # A periodic cube, one BoxSize length as grove writes it: yt takes it from the file and keeps it
    # periodic (the gas, which fits a unit cube, with the box rewritten as one).
    cube = os.path.join(work, "sph", "snapshot_cube.hdf5")
    shutil.copy(path, cube)
    with h5py.File(cube, "r+") as f:
        f["Header"].attrs["BoxSize"] = 1.0
    cube_ds = yt_load.load(cube)
    assert np.array_equal(cube_ds.domain_right_edge.to("cm").value, np.ones(3)), cube_ds.domain_right_edge
    assert all(cube_ds.periodicity), cube_ds.periodicity
    assert cube_ds.all_data()["PartType0", "density"].size == density.size

    slice_png = os.path.join(work, "yt_density_slice.png")
    yt.SlicePlot(ds, "z", ("gas", "density")).save(slice_png)
    assert os.path.getsize(slice_png) > 10000, "yt drew no slice"
    print(f"yt {yt.__version__} read {ad['PartType0', 'density'].size} gas particles and 4096 bodies; "
          f"density slice {slice_png}")


if __name__ == "__main__":
    main()
