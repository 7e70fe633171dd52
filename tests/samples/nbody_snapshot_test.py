"""samples/nbody's HDF5 snapshot and parameter file, as a user meets them (ctest, 2 ranks).

Runs the sample with a parameter file and one option overriding it, then reads the snapshot
with h5py: the GADGET-4/SWIFT layout, every body once with finite fields, the override in
effect, the file and the options echoed into /Parameters. The XDMF file beside each snapshot and
the run's series (snapshots.xdmf) must name every table with its shape and type, the points
being the particles, at each snapshot's time. A bad value and a misspelt key in the file must
stop the run with the option named.

usage: nbody_snapshot_test.py MPIEXEC NBODY WORKDIR
"""
import glob
import os
import shutil
import subprocess
import sys

import xml.etree.ElementTree as ET

import h5py
import numpy as np

# XDMF's number types for numpy's.
XDMF_TYPES = {np.dtype("<f8"): ("Float", "8"), np.dtype("<f4"): ("Float", "4"), np.dtype("<i8"): ("Int", "8"),
              np.dtype("<i4"): ("Int", "4")}


def check_xdmf_grid(grid, xdmf_dir):
    """A grid of one snapshot's particles against the HDF5 file it names; returns the file's time."""
    def table(item):
        name, dataset = item.text.strip().split(":", 1)
        path = os.path.join(xdmf_dir, name)
        with h5py.File(path, "r") as f:
            d = f[dataset]
            dims = [int(x) for x in item.get("Dimensions").split()]
            assert list(d.shape) == dims, (dataset, d.shape, dims)
            assert XDMF_TYPES[d.dtype] == (item.get("NumberType"), item.get("Precision")), (dataset, d.dtype)
            return path, dataset, d.shape[0]
    path, coordinates, count = table(grid.find("Geometry/DataItem"))
    assert grid.find("Geometry").get("GeometryType") == "XYZ"
    assert int(grid.find("Topology").get("NumberOfElements")) == count
    group = coordinates.rsplit("/", 1)[0]
    with h5py.File(path, "r") as f:
        expected = sorted(name for name in f[group] if name != "Coordinates")
        time = float(f["Header"].attrs["Time"])
    names = []
    for attribute in grid.findall("Attribute"):
        _, dataset, rows = table(attribute.find("DataItem"))
        assert dataset == group + "/" + attribute.get("Name") and rows == count, (dataset, rows)
        names.append(attribute.get("Name"))
    assert sorted(names) == expected, (names, expected)
    assert float(grid.find("Time").get("Value")) == time, (grid.find("Time").get("Value"), time)
    return time


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)


def main():
    mpiexec, nbody, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    mpi = [mpiexec, "-np", "2", "--oversubscribe"]
    with open(os.path.join(work, "run.toml"), "w") as f:
        f.write('particles = 3000\ntheta = 0.7\nt-end = 0.015625\ndt = 0.0078125\nsnapshot-every = 1\noutput-dir = "out"\n')
    r = run(mpi + [nbody, "--config", "run.toml", "--theta", "0.6"], work)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "theta = 0.6," in r.stdout, "the command line overrides the file:\n" + r.stdout

    with h5py.File(os.path.join(work, "out", "snapshot_00002.hdf5"), "r") as f:
        header = f["Header"].attrs
        assert list(header["NumPart_Total"]) == [0, 3000, 0, 0, 0, 0], header["NumPart_Total"]
        assert abs(header["Time"] - 0.015625) < 1e-15 and header["Step"] == 2, (header["Time"], header["Step"])
        part = f["PartType1"]  # collisionless bodies, as GADGET numbers them
        for name in ("Coordinates", "Velocities", "Acceleration"):
            assert part[name].shape == (3000, 3), (name, part[name].shape)
            assert np.all(np.isfinite(part[name][:])), name
        ids = np.sort(part["ParticleIDs"][:])
        assert np.array_equal(ids, np.arange(3000)), "every body once"
        masses = part["Masses"][:]
        assert abs(masses.sum() - 1.0) < 1e-12, masses.sum()
        assert np.all(part["Potential"][:] < 0.0)
        text = f["Parameters"].attrs["Text"].decode()
        assert "theta = 0.7" in text and "theta=0.6" in text, text

    out = os.path.join(work, "out")
    snapshots = sorted(glob.glob(os.path.join(out, "snapshot_*.hdf5")))
    for snapshot in snapshots:
        root = ET.parse(snapshot[:-len(".hdf5")] + ".xdmf").getroot()
        grids = root.findall("Domain/Grid")
        assert len(grids) == 1 and grids[0].get("Name") == "PartType1", [g.get("Name") for g in grids]
        check_xdmf_grid(grids[0], out)
    series = ET.parse(os.path.join(out, "snapshots.xdmf")).getroot().find("Domain/Grid")
    assert series.get("CollectionType") == "Temporal"
    times = [check_xdmf_grid(grid, out) for grid in series.findall("Grid")]
    assert len(times) == len(snapshots) >= 2 and times == sorted(times), (times, snapshots)

    with open(os.path.join(work, "bad.toml"), "w") as f:
        f.write("particles = 3000\ntheta = abc\n")
    r = run(mpi + [nbody, "--config", "bad.toml"], work)
    assert r.returncode != 0 and "--theta" in r.stdout + r.stderr, r.stdout + r.stderr
    with open(os.path.join(work, "typo.toml"), "w") as f:
        f.write("particles = 3000\ntheat = 0.5\n")
    r = run(mpi + [nbody, "--config", "typo.toml"], work)
    assert r.returncode != 0 and "theat" in r.stdout + r.stderr, r.stdout + r.stderr
    print("nbody snapshot and parameter file: ok")


if __name__ == "__main__":
    main()
