"""Opens grove's XDMF descriptions of HDF5 snapshots in ParaView and checks them against h5py.

Run by ParaView's Python (Debian's paraview package; not a CI test, since ParaView is large):

    pvbatch --force-offscreen-rendering tools/paraview_check.py OUT/snapshot_00004.xdmf \
        [--series OUT/snapshots.xdmf] [--color Masses] [--png picture.png] [--zoom 1]

For the snapshot's XDMF file it checks that ParaView's XDMF reader finds as many points as the
HDF5 file holds particles, one point array per table of the particle type (Coordinates are the
points), and each array's range (per component) equal to the range h5py reads from the table.
For a series it checks ParaView's time steps against every snapshot's /Header/Time. With --png it
renders the points, coloured by --color, into a picture. Prints what it checked; exits 1 when a
check fails.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np
from paraview import simple as pv
from paraview import servermanager

failures = []


def check(ok, what):
    print(("ok      " if ok else "FAILED  ") + what)
    if not ok:
        failures.append(what)


def hdf5_tables(xdmf_path):
    """The HDF5 file and particle group an XDMF file of one snapshot names (its Coordinates)."""
    root = ET.parse(xdmf_path).getroot()
    item = root.find(".//Geometry/DataItem")
    file_name, dataset = item.text.strip().split(":", 1)
    return os.path.join(os.path.dirname(xdmf_path), file_name), dataset.rsplit("/", 1)[0]


def points_of(reader):
    """The reader's output as one point set (a single grid, or the blocks of a collection merged)."""
    data = servermanager.Fetch(reader)
    if data.IsA("vtkMultiBlockDataSet") or data.IsA("vtkCompositeDataSet"):
        merged = pv.MergeBlocks(Input=reader)
        data = servermanager.Fetch(merged)
    return data


def check_snapshot(xdmf_path):
    h5_path, group = hdf5_tables(xdmf_path)
    reader = pv.XDMFReader(FileNames=[xdmf_path])
    reader.PointArrayStatus = reader.GetProperty("PointArrayInfo")[::2]  # every array
    reader.UpdatePipeline()
    data = points_of(reader)
    print(f"{xdmf_path}: ParaView's {reader.GetXMLName()} reads {data.GetClassName()}")
    with h5py.File(h5_path, "r") as f:
        tables = {name: f[group][name][()] for name in f[group]}
    count = len(tables["Coordinates"])
    check(data.GetNumberOfPoints() == count,
          f"points: ParaView {data.GetNumberOfPoints()}, h5py {count} rows of {group}/Coordinates")
    positions = np.array([data.GetPoint(i) for i in range(0, count, max(1, count // 1000))])
    check(np.array_equal(positions, tables["Coordinates"][::max(1, count // 1000)]),
          f"point coordinates equal the table's (every {max(1, count // 1000)}th of {count})")
    point_data = data.GetPointData()
    names = sorted(point_data.GetArrayName(i) for i in range(point_data.GetNumberOfArrays()))
    expected = sorted(name for name in tables if name != "Coordinates")
    check(names == expected, f"point arrays: ParaView {names}, h5py {expected}")
    for name in expected:
        array = point_data.GetArray(name)
        if array is None:
            continue
        table = tables[name].reshape(count, -1)
        for c in range(table.shape[1]):
            pv_range = array.GetRange(c)
            h5_range = (float(table[:, c].min()), float(table[:, c].max()))
            check(pv_range == h5_range, f"{name}[{c}] range: ParaView {pv_range}, h5py {h5_range}")
    return reader


def check_series(series_path):
    reader = pv.XDMFReader(FileNames=[series_path])
    reader.UpdatePipelineInformation()
    steps = list(reader.TimestepValues) if reader.TimestepValues else []
    root = ET.parse(series_path).getroot()
    times = []
    for grid in root.find("Domain/Grid"):
        if grid.tag != "Grid":
            continue
        item = grid.find(".//Geometry/DataItem")
        h5_path = os.path.join(os.path.dirname(series_path), item.text.strip().split(":", 1)[0])
        with h5py.File(h5_path, "r") as f:
            times.append(float(f["Header"].attrs["Time"]))
    check(steps == times, f"{series_path}: ParaView's time steps {steps}, the snapshots' /Header/Time {times}")
    reader.UpdatePipeline(times[-1])
    data = points_of(reader)
    with h5py.File(h5_path, "r") as f:
        count = int(sum(f["Header"].attrs["NumPart_Total"]))
    check(data.GetNumberOfPoints() == count, f"at t = {times[-1]}: ParaView {data.GetNumberOfPoints()} points, "
          f"the last snapshot {count} particles")


def render(reader, color, png, zoom):
    view = pv.CreateRenderView()
    view.ViewSize = [640, 480]
    view.OrientationAxesVisibility = 0
    display = pv.Show(reader, view)
    display.SetRepresentationType("Points")
    display.PointSize = 2
    pv.ColorBy(display, ("POINTS", color))
    display.RescaleTransferFunctionToDataRange(True, False)
    display.SetScalarBarVisibility(view, True)
    view.CameraPosition = [2.5, -3.5, 2.0]
    view.CameraViewUp = [0, 0, 1]
    pv.Render(view)  # the first render resets the camera: set it after
    view.ResetCamera()
    view.GetActiveCamera().Dolly(zoom)  # closer than the outermost particles
    pv.Render(view)
    pv.SaveScreenshot(png, view, ImageResolution=[640, 480])
    print(f"rendered {png} ({os.path.getsize(png)} bytes), coloured by {color}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("xdmf", help="a snapshot's XDMF file (written beside it by grove::io::writeSnapshot)")
    parser.add_argument("--series", help="the run's temporal collection (grove::io::writeXdmfSeries)")
    parser.add_argument("--color", default="Masses", help="the point array to colour the picture by")
    parser.add_argument("--png", help="where to save the picture")
    parser.add_argument("--zoom", type=float, default=1.0, help="the camera moved this many times closer")
    args = parser.parse_args()
    reader = check_snapshot(args.xdmf)
    if args.series:
        check_series(args.series)
    if args.png:
        render(reader, args.color, args.png, args.zoom)
    print(f"{len(failures)} check(s) failed" if failures else "every check passed", flush=True)
    # Without the interpreter's teardown: under Xvfb, ParaView's GLX context fails to close there
    # ("GLXBadContext") and turns a passing run's status into 1.
    sys.stderr.flush()
    os._exit(1 if failures else 0)


if __name__ == "__main__":
    main()
