"""yt reads the samples' HDF5 snapshots (through its GADGET HDF5 reader), as a user would.

Runs samples/nbody and samples/sph for a few steps, then loads each snapshot with yt.load (the
bounding box and units given, as yt asks of non-cosmological GADGET files): every particle there,
the fields equal to the file's (h5py), and for the gas yt's own SPH fields (density, smoothing
length) and a density slice drawn by yt's SPH deposition.

usage: yt_read_test.py MPIEXEC NBODY SPH WORKDIR   (registered only where yt imports)
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import yt

yt.set_log_level(40)
UNITS = {"length": (1.0, "cm"), "mass": (1.0, "g"), "velocity": (1.0, "cm/s")}


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr


def main():
    mpiexec, nbody, sph, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run([mpiexec, "-np", "1", nbody, "-n", "4096", "--t-end", "0.0078125", "--dt", "0.0078125", "-o", "nbody"], work)
    run([mpiexec, "-np", "1", sph, "--nx", "48", "--n-ngb", "50", "--max-steps", "2", "-o", "sph"], work)

    # Bodies (PartType1) of an open box: yt needs a box around them.
    path = os.path.join(work, "nbody", "snapshot_00001.hdf5")
    with h5py.File(path, "r") as f:
        pos = f["PartType1/Coordinates"][:]
        mass = f["PartType1/Masses"][:]
    reach = float(np.abs(pos).max()) * 1.01
    ds = yt.load(path, bounding_box=[[-reach, reach]] * 3, unit_base=UNITS)
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
    ds = yt.load(path, bounding_box=[[0.0, b] for b in box], unit_base=UNITS)
    ad = ds.all_data()
    yt_density = np.sort(ad["PartType0", "density"].to("g/cm**3").value)
    yt_hsml = np.sort(ad["PartType0", "smoothing_length"].to("cm").value)
    assert yt_density.size == density.size, (yt_density.size, density.size)
    assert np.array_equal(yt_density, density), "yt's density is not the file's"
    assert np.array_equal(yt_hsml, hsml), "yt's smoothing length is not the file's"
    slice_png = os.path.join(work, "yt_density_slice.png")
    yt.SlicePlot(ds, "z", ("gas", "density")).save(slice_png)
    assert os.path.getsize(slice_png) > 10000, "yt drew no slice"
    print(f"yt {yt.__version__} read {ad['PartType0', 'density'].size} gas particles and 4096 bodies; "
          f"density slice {slice_png}")


if __name__ == "__main__":
    main()
