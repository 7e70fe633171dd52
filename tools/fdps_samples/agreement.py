#!/usr/bin/env python3
"""FDPS 7.1's ten C++ sample programs, built against FDPS and against Grove, run side by side.

    tools/fdps_samples/agreement.py PATH/TO/fdps-7.1.tar.gz [--work DIR] [--ranks 1 2]
                                    [--samples nbody sph ...] [--build-only] [--markdown FILE]

The tarball is unpacked twice under the work folder: fdps/ is FDPS as shipped; in grove/ the
folder src/ is replaced by a link to Grove's framework/include/grove (where particle_simulator.hpp
lives), so every sample's Makefile, with its own flags and relative include paths, compiles
against Grove. Nothing of FDPS goes into Grove: the samples are built from the tarball, in the
work folder. The Makefiles are run unchanged; only make variables given on the command line
differ between the two builds:
  - the compiler: mpicxx for FDPS; tools/fdps_samples/grove-cxx for Grove (mpicxx plus Grove's
    include folders, C++20 and Grove's libraries). Both add -DPARTICLE_SIMULATOR_MPI_PARALLEL,
    since the samples whose Makefile builds them serially by default are run at 2 ranks too;
  - planetary_ring: use_pikg_x86=no (PIKG is not part of the tarball);
  - treepm (Grove): PM_ROOT at a copy of grove/pm/fdps_root whose param_fdps.h carries the mesh
    size of FDPS's own param_fdps.h, so both runs use the same mesh.
Runs are shortened (fewer steps or a sooner end time, the same for both builds: by an option
where the sample has one, else by editing the one line that sets the end time in both copies)
and take the sample's own initial conditions. Each run's figures (energies, momenta, conserved
quantities) are read from what it prints or writes, FDPS's against Grove's, and a table is
printed (and written as Markdown with --markdown). Time per step is the wall time of the whole
run (start-up and output included) over its steps, OMP_NUM_THREADS=1 for both.

Grove is built first (GROVE_BUILD_DIR, default build-fdps-samples in the source tree): the grove
library and the FDPS-style test program whose link line grove-cxx reads.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

GROVE_SOURCE = Path(__file__).resolve().parents[2]
GROVE_CXX = Path(__file__).resolve().parent / "grove-cxx"


# ---- what each sample needs --------------------------------------------------------------------

@dataclass
class Figure:
    """One number a run reports: the last match of `pattern` (one group) in its stdout and stderr,
    what `parse(stdout and stderr)` finds there, or what `reader(run folder)` computes from the
    files it wrote."""
    name: str
    pattern: str = ""
    reader: Optional[Callable] = None
    parse: Optional[Callable] = None
    tolerance: float = 0.0    # relative; 0: equal to the digits printed
    absolute: float = 0.0     # for quantities conserved at zero (momenta): both below it agree
    difference: float = 0.0   # for errors of a conserved quantity: they agree within this
    why: str = ""             # why the tolerance, for the table


@dataclass
class Sample:
    name: str                 # table name
    folder: str               # the Makefile's folder under sample/c++
    executable: str
    compiler_vars: list       # make variables that name the C++ compiler
    make_vars: dict = field(default_factory=dict)
    grove_make_vars: Callable = None   # work folder -> extra make variables for Grove's build
    run_folder: str = ""      # under sample/c++, where the program runs (default: folder)
    args: list = field(default_factory=list)
    shorten: list = field(default_factory=list)   # (file, old text, new text) in both copies
    figures: list = field(default_factory=list)
    steps: Callable = None    # (stdout+stderr) -> steps run
    prepare: Callable = None  # run folder -> None, before each run (inputs the sample expects)
    max_ranks: int = 0        # where the sample itself cannot run on more ranks (0: no limit)
    why_not_more: str = ""    # why, for the table


NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)"


def last_int(pattern):
    def steps(out):
        found = re.findall(pattern, out, re.M)
        return int(found[-1]) if found else 0
    return steps


def last_block_value(index: int):
    """The index-th distinct number (0: the first) of the last block of numbers, one a line, after
    a "step = N" line and a "//===" line. nbodysph prints its block on every rank, so at 2 ranks
    the two copies' lines may interleave; each rank prints them in the same order, so the order
    in which the distinct values first appear is the block's own."""
    def parse(out):
        blocks = re.findall(r"^step = \d+\n//=+\n((?:\S+\n)+)", out, re.M)
        if not blocks:
            return None
        distinct = []
        for line in blocks[-1].split():
            if re.fullmatch(NUMBER, line) and line not in distinct:
                distinct.append(line)
        return distinct[index] if index < len(distinct) else None
    return parse


def count(pattern):
    return lambda out: len(re.findall(pattern, out, re.M))


def dem_kinetic_energy(folder: Path) -> float:
    """Sum of m v^2 / 2 (translation) over the last snapshot the DEM sample wrote (one file a rank:
    result/NNNNN_<ranks>_<rank>.dat, two header lines, then id m r x y z vx vy vz ...)."""
    files = sorted((folder / "result").glob("*_*_*.dat"))
    last = max(f.name.split("_")[0] for f in files)
    energy = 0.0
    for f in files:
        if f.name.split("_")[0] != last:
            continue
        for line in f.read_text().splitlines()[2:]:
            c = line.split()
            if len(c) >= 9:
                m, vx, vy, vz = float(c[1]), float(c[6]), float(c[7]), float(c[8])
                energy += 0.5 * m * (vx * vx + vy * vy + vz * vz)
    return energy


def treepm_diag(row: int, column: int):
    """A number from the TreePM sample's log random.diag (per step: step, time, dt, redshift, a,
    wall time). Read by position, skipping '#' lines: the sample never sets run_param::step, and
    writes its header line only when the memory it holds happens to be 0, so whether a header
    comes first depends on the build (FDPS's runs had one, Grove's none: dropping the first line
    unread took Grove's second step for its first)."""
    def read(folder: Path) -> float:
        rows = [line.split() for line in (folder / "random.diag").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
        return float(rows[row][column])
    return read


def write_treepm_parameters(folder: Path):
    """FDPS's TreePM sample has no input of its own: its README's format 2 (random particles)."""
    (folder / "random.para").write_text(
        "2\n0.02\n0.5\n9.0\n10.0\n0.3\n0.7\n0.0\n0.0\n32768\nrandom\n1\n9.0\n")


SAMPLES = [
    Sample("nbody", "nbody", "nbody.out", ["CC"],
           args=["-T", "0.25", "-N", "8192"],
           figures=[Figure("energy error", r"energy error: " + NUMBER, difference=1e-5,
                           why="(E - E0)/E0 of a theta = 0.5 monopole tree: both conserve E to ~1e-5 "
                               "over the run, so their E agree to that; two trees (LETs) differ below it")],
           steps=lambda out: 32),
    Sample("sph", "sph", "sph.out", ["CC"],
           shorten=[("main.cpp", "*end_time = 0.12;", "*end_time = 0.012;")],
           figures=[Figure("total energy", r"^step = \d+\n=+\n" + NUMBER + r"$", tolerance=1e-6,
                           why="conserved to round-off; neighbour sums in another order"),
                    Figure("momentum x", r"^step = \d+\n=+\n\S+\n" + NUMBER + r"$", tolerance=1e-6,
                           absolute=1e-14, why="zero to round-off")],
           steps=last_int(r"^step = (\d+)")),
    Sample("dem", "dem", "a.out", ["CC"],
           shorten=[("init/InfiniteCylinder2.h", "sysinfo.end_time = 10.0;", "sysinfo.end_time = 0.05;")],
           figures=[Figure("kinetic energy (last snapshot)", reader=dem_kinetic_energy, tolerance=1e-6,
                           why="collisions in another order change round-off only")],
           steps=lambda out: 0, max_ranks=1,
           why_not_more="the sample gives every rank one particle and fills it on rank 0 only: "
                        "FDPS hangs, Grove stops on the non-finite position"),
    Sample("nbodysph", "nbodysph", "sph.out", ["CC"],
           shorten=[("init.cpp", "*end_time = 0.77;", "*end_time = 0.3;")],
           # The figure (thermal plus kinetic energy) follows the gravity of a theta = 0.7 tree
           # (FDPS's default), ~0.8% rms from direct summation in both codes; FDPS's own 1- and
           # 2-rank figures differ by 1.2e-3 (its 2-rank LET gives other, equally accurate forces).
           figures=[Figure("total energy", parse=last_block_value(1), tolerance=3e-3,
                           why="gravity by a theta = 0.7 tree (~0.8% rms): FDPS's 1- and 2-rank runs differ by 1.2e-3"),
                    Figure("dt", r"dt = " + NUMBER, tolerance=1e-2, why="the CFL step: a minimum over particles")],
           steps=last_int(r"^step = (\d+)")),
    Sample("nbody+sph", "nbody+sph", "nbodysph.out", ["CXX"],
           # The Makefile's initial condition 0 reads a galaxy made by MAGI, which the tarball
           # does not ship; 1 (cold collapse of N-body and SPH spheres) is the next it offers.
           shorten=[("Makefile", "CXXFLAGS += -DINITIAL_CONDITION=0", "CXXFLAGS += -DINITIAL_CONDITION=1"),
                    ("ic.hpp", "time_end  = 2.0 * unit_time;", "time_end  = 0.02 * unit_time;")],
           figures=[Figure("E_tot", r"E_tot  = " + NUMBER, tolerance=1e-4,
                           why="gravity by a tree: energy to the tree's accuracy")],
           steps=count(r"^E_tot")),
    Sample("vdw-test", "vdw-test", "vdwtest.out", ["CC"],
           args=["-T", "0.25"],
           figures=[Figure("energy error", r"energy error: " + NUMBER, difference=1e-6,
                           why="(E - E0)/E0: the two E agree to this")],
           steps=count(r"energy error"), max_ranks=1,
           why_not_more="the sample aborts on more than one rank (MakeUniformCube: n_loc and n_glb must be the same)"),
    Sample("water/flex", "water/src/flex", "main.out", ["CXX"], run_folder="water",
           args=["-s", "10"],
           figures=[Figure("Epot", r"Epot: " + NUMBER, tolerance=1e-6, why="round-off of the sums' order"),
                    Figure("Ekin", r"Ekin: " + NUMBER, tolerance=1e-6, why="round-off of the sums' order")],
           steps=count(r"Rel\.Err\.")),
    Sample("water/rigid", "water/src/rigid", "main.out", ["CXX"], run_folder="water",
           args=["-s", "10"],
           # The cutoff (IPS) tree runs at the sample's default theta = 0: every image within
           # r_cut as a particle, so only the order of the sums differs.
           figures=[Figure("Epot", r"Epot: " + NUMBER, tolerance=1e-6, why="round-off of the sums' order"),
                    Figure("Ekin", r"Ekin: " + NUMBER, tolerance=1e-6, why="round-off of the sums' order")],
           steps=count(r"Rel\.Err\.")),
    Sample("planetary_ring", "planetary_ring", "ring_mono.out", ["CXX"],
           make_vars={"use_pikg_x86": "no"},
           args=["-T", "0.0625"],
           figures=[Figure("relative energy error", r"\(eng_now\.tot-eng_init\.tot\)/eng_init\.tot= " + NUMBER,
                           tolerance=0.05, absolute=1e-9,
                           why="energy kept to round-off (1e-11): both at round-off level agree")],
           steps=last_int(r"n_loop= (\d+)")),
    Sample("treepm", "treepm", "treepm", ["CXX"],
           grove_make_vars=lambda work: {"PM_ROOT": str(work / "grove" / "pm_root")},
           args=["random.para"], prepare=write_treepm_parameters,
           # dt = sqrt(eps / |a|) a^3 of the one particle with the largest acceleration, tree
           # (PP) plus mesh (PM). Each code's PP force is within 2.4% (FDPS) and 2.5% (Grove) rms
           # of direct summation at theta 0.5, so dt agrees to the trees' accuracy, not to 1e-3.
           figures=[Figure("first dt", reader=treepm_diag(0, 2), tolerance=1e-2,
                           why="set by one particle's acceleration, tree (theta 0.5, ~2.5% rms) plus mesh")],
           steps=count(r"this_run\.step=")),
]


# ---- building ----------------------------------------------------------------------------------

def run(cmd, cwd, log, env=None, timeout=None):
    with open(log, "a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}  (in {cwd})\n")
        f.flush()
        return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=timeout).returncode


def unpack(tarball: Path, work: Path):
    """fdps/: FDPS as shipped. grove/: the same samples, src/ a link to Grove's headers."""
    for side in ("fdps", "grove"):
        root = work / side
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        with tarfile.open(tarball) as tar:
            tar.extractall(root, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(root)
        inner = next(root.iterdir())          # the tarball's top folder
        for item in inner.iterdir():
            item.rename(root / item.name)
        inner.rmdir()
    grove_src = work / "grove" / "src"
    fdps_pm = grove_src / "particle_mesh" / "param_fdps.h"
    mesh = re.search(r"SIZE_OF_MESH\s*\(?\s*(\d+)", fdps_pm.read_text()).group(1)
    shutil.rmtree(grove_src)
    grove_src.symlink_to(GROVE_SOURCE / "framework" / "include" / "grove")
    # Grove's PM folder for FDPS Makefiles, with FDPS's mesh size, as a user edits param_fdps.h.
    pm_root = work / "grove" / "pm_root"
    shutil.copytree(GROVE_SOURCE / "framework" / "include" / "grove" / "pm" / "fdps_root", pm_root)
    (pm_root / "param_fdps.h").write_text(
        "#pragma once\n// FDPS 7.1's shipped mesh size, so that both builds use the same mesh.\n"
        f"#define SIZE_OF_MESH ({mesh})\n")


def build_grove(build: Path, log: Path):
    if not (build / "CMakeCache.txt").exists():
        if run(["cmake", "-S", GROVE_SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release"], GROVE_SOURCE, log):
            sys.exit(f"configuring Grove failed: see {log}")
    if run(["cmake", "--build", build, "--target", "grove_fdps_program", "-j2"], GROVE_SOURCE, log):
        sys.exit(f"building Grove failed: see {log}")


def build_sample(sample: Sample, side: str, work: Path, log: Path, env) -> bool:
    folder = work / side / "sample" / "c++" / sample.folder
    compiler = ("mpicxx" if side == "fdps" else str(GROVE_CXX)) + " -DPARTICLE_SIMULATOR_MPI_PARALLEL"
    variables = [f"{v}={compiler}" for v in sample.compiler_vars]
    variables += [f"{k}={v}" for k, v in sample.make_vars.items()]
    if side == "grove" and sample.grove_make_vars:
        variables += [f"{k}={v}" for k, v in sample.grove_make_vars(work).items()]
    for file, old, new in sample.shorten:
        path = folder / file
        text = path.read_text()
        if old in text:
            path.write_text(text.replace(old, new, 1))
        elif new not in text:  # else edited by an earlier run of this script (--no-unpack)
            sys.exit(f"{sample.name}: '{old}' not found in {path}: the shortening no longer applies")
    ok = run(["make", *variables], folder, log, env=env) == 0
    return ok and (folder / sample.executable).exists()


# ---- running and comparing ---------------------------------------------------------------------

def run_sample(sample: Sample, side: str, ranks: int, work: Path, log: Path, timeout: int):
    """Runs one build at `ranks` ranks; returns (figures or None, seconds per step, steps)."""
    sample_root = work / side / "sample" / "c++"
    folder = sample_root / (sample.run_folder or sample.folder)
    program = (sample_root / sample.folder / sample.executable).resolve()
    # A fresh, empty result/: some samples make it, the DEM sample expects it (as its user would).
    shutil.rmtree(folder / "result", ignore_errors=True)
    (folder / "result").mkdir()
    if sample.prepare:
        sample.prepare(folder)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), program, *sample.args]
    out_file = work / f"{sample.name.replace('/', '_')}.{side}.np{ranks}.out"
    start = time.monotonic()
    with open(out_file, "w") as f:
        try:
            rc = subprocess.run(cmd, cwd=folder, stdout=f, stderr=subprocess.STDOUT, env=env,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    seconds = time.monotonic() - start
    out = out_file.read_text(errors="replace")
    with open(log, "a") as f:
        f.write(f"{sample.name} {side} np{ranks}: rc {rc}, {seconds:.2f} s, output in {out_file}\n")
    figures = {}
    for fig in sample.figures:
        try:
            if fig.reader:
                figures[fig.name] = fig.reader(folder)
            elif fig.parse:
                figures[fig.name] = fig.parse(out)
            else:
                found = re.findall(fig.pattern, out, re.M)
                figures[fig.name] = found[-1] if found else None
        except (OSError, ValueError, IndexError):
            figures[fig.name] = None
    steps = sample.steps(out) if sample.steps else 0
    return rc, figures, seconds / steps if steps else None, steps, seconds


def agree(a, b, fig: Figure):
    if a is None or b is None:
        return False
    if isinstance(a, str) and isinstance(b, str) and a == b:
        return True
    x, y = float(a), float(b)
    if x == y or abs(x - y) <= fig.tolerance * max(abs(x), abs(y)):
        return True
    if abs(x - y) <= fig.difference:
        return True
    return abs(x) <= fig.absolute and abs(y) <= fig.absolute


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tarball", type=Path, help="FDPS 7.1's source tarball (fdps-7.1.tar.gz)")
    parser.add_argument("--work", type=Path, default=GROVE_SOURCE / "build-fdps-agreement")
    parser.add_argument("--grove-build", type=Path,
                        default=Path(os.environ.get("GROVE_BUILD_DIR", GROVE_SOURCE / "build-fdps-samples")))
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--samples", nargs="+", default=[s.name for s in SAMPLES])
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--no-unpack", action="store_true",
                        help="keep the work folder as an earlier run left it (make rebuilds what changed)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a run may take")
    parser.add_argument("--markdown", type=Path, help="write the table here too")
    args = parser.parse_args()

    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    log = work / "agreement.log"
    if not args.tarball.is_file():
        sys.exit(f"no FDPS tarball at {args.tarball}")
    if not args.no_unpack:
        unpack(args.tarball.resolve(), work)
    grove_build = args.grove_build.resolve()
    build_grove(grove_build, log)
    env = dict(os.environ, GROVE_BUILD_DIR=str(grove_build), GROVE_SOURCE_DIR=str(GROVE_SOURCE))

    chosen = [s for s in SAMPLES if s.name in args.samples]
    built = {}
    for sample in chosen:
        for side in ("fdps", "grove"):
            exe = work / side / "sample" / "c++" / sample.folder / sample.executable
            built[sample.name, side] = build_sample(sample, side, work, log, env)
            print(f"build {sample.name:15s} {side:5s}: {'ok' if built[sample.name, side] else 'FAILED'}", flush=True)
    if args.build_only:
        return 0 if all(built.values()) else 1

    rows = ["| program | ranks | figure | FDPS | Grove | agree | s/step FDPS | s/step Grove |",
            "|---|---|---|---|---|---|---|---|"]
    for sample in chosen:
        for ranks in args.ranks:
            if sample.max_ranks and ranks > sample.max_ranks:
                rows.append(f"| {sample.name} | {ranks} | not run: {sample.why_not_more} | | | | | |")
                print(rows[-1], flush=True)
                continue
            result = {}
            for side in ("fdps", "grove"):
                result[side] = run_sample(sample, side, ranks, work, log, args.timeout) if built[sample.name, side] else None
            for fig in sample.figures:
                def shown(side):
                    r = result[side]
                    if r is None:
                        return "not built"
                    if r[0] != 0:
                        return f"failed ({r[0]})"
                    v = r[1][fig.name]
                    return "-" if v is None else (f"{v:.10g}" if isinstance(v, float) else v)
                def per_step(side):
                    r = result[side]
                    return f"{r[2]:.4f}" if r and r[2] else (f"{r[4]:.2f} s run" if r else "-")
                ok = all(result[s] and result[s][0] == 0 for s in ("fdps", "grove")) and \
                    agree(result["fdps"][1][fig.name], result["grove"][1][fig.name], fig)
                terms = [f"{fig.tolerance:g}"] if fig.tolerance else []
                terms += [f"within {fig.difference:g}"] if fig.difference else []
                terms += [f"zero below {fig.absolute:g}"] if fig.absolute else []
                tol = ", ".join(terms) or "digits printed"
                rows.append(f"| {sample.name} | {ranks} | {fig.name} | {shown('fdps')} | {shown('grove')} | "
                            f"{'yes' if ok else 'NO'} ({tol}) | {per_step('fdps')} | {per_step('grove')} |")
                print(rows[-1], flush=True)
    table = "\n".join(rows)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
