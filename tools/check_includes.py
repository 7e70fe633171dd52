#!/usr/bin/env python3
"""The include graph's rules, checked on every quoted #include of the repository's own code.

1. Inside the framework (framework/include/grove and framework/src), a folder includes only
   folders below it in LAYERS (and itself). So the basic parts never reach up into what assembles
   them: the tree data structure does not know the walks, the walks do not know the force
   classes, and so on. Two folders on the same layer do not include each other. The layers,
   lowest first:
     core                  vectors, boxes, errors, execution policies, the particle contracts
     comm                  the communicator
     gpu                   the device runtime: cuda_resources, device vectors, the device particle
                           system, the transport, forEach, device_primitives, stage_marks
     runtime, domain       the process's start and end, logging; the domain decomposition (host
                           and device)
     particles             particle systems and their exchange (host and device)
     tree, io, pm          the tree stages (host and device); snapshots and checkpoints; the
                           particle-mesh module
     gpu/multiwalk         the multiwalk engine (FDPS's dispatch/retrieve on the device)
     walk                  the walks and the neighbour search (host and device)
     let                   the local essential trees (host and device)
     force                 the force classes that assemble tree, walk and LET (host and device)
     fmm, fdps             the fast multipole method; the FDPS-compatible API (PS::)
     <root>                grove.hpp, fdps.hpp, particle_simulator.hpp, and the umbrella
                           gpu/resident.cuh
   Device code sits beside the host code of its stage (a *_gpu.cuh beside the .hpp), so it may
   include the device runtime, which therefore sits right after comm; gpu/multiwalk is the only
   subfolder with a layer of its own.
2. user_templates/ is self-contained: its files include grove's headers and each other, nothing
   of samples/ or tests/, so a user can copy the folder alone.
3. Each sample folder (samples/<name>/) includes grove, user_templates/, samples/common/ and its
   own files, never another sample's.
4. Every quoted include resolves to a file that exists (relative to the including file, or in one
   of the roots the rules allow), so a rename cannot leave a dangling include behind.

Usage: tools/check_includes.py [repository root]. Prints each violation as file:line and exits 1
if there is any; prints the folder graph's size and exits 0 otherwise.
"""
import pathlib
import re
import sys

# Lowest first. A folder may include folders of a strictly lower layer, and itself.
LAYERS = [
    ["core"],
    ["comm"],
    ["gpu"],                 # the device runtime: streams, device vectors, transport, forEach
    ["runtime", "domain"],
    ["particles"],
    ["tree", "io", "pm"],
    ["gpu/multiwalk"],       # the multiwalk engine (FDPS's dispatch/retrieve on the device)
    ["walk"],
    ["let"],
    ["force"],               # the force classes that assemble tree, walk and LET
    ["fmm", "fdps"],
    ["<root>"],              # grove.hpp, fdps.hpp, particle_simulator.hpp
]
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
# Umbrella headers: one include for a whole API, so they sit on the top layer wherever they live.
UMBRELLAS = {"gpu/resident.cuh"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = {".hpp", ".h", ".cpp", ".cu", ".cuh"}


def grove_folder(relative):
    """The layer folder of a path below grove/ (e.g. 'tree/moments.hpp' -> 'tree')."""
    parts = pathlib.PurePosixPath(relative).parts
    if len(parts) == 1 or str(pathlib.PurePosixPath(relative)) in UMBRELLAS:
        return "<root>"
    if parts[0] == "gpu" and len(parts) > 2 and parts[1] == "multiwalk":
        return "gpu/multiwalk"
    return parts[0]


def quoted_includes(path):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        match = INCLUDE.match(line)
        if match:
            yield number, match.group(1)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    grove_include = root / "framework/include"
    generated = {"grove/config.hpp"}  # written by CMake into the build folder
    errors = []
    edges = set()

    def resolve(including, name, roots):
        for base in [including.parent, *roots]:
            if (base / name).is_file():
                return (base / name).resolve()
        return None

    def check_file(path, roots, rule):
        for number, name in quoted_includes(path):
            where = f"{path.relative_to(root)}:{number}"
            if name in generated:
                continue
            target = resolve(path, name, roots)
            if target is None:
                errors.append(f"{where}: \"{name}\" does not resolve ({rule})")
                continue
            yield where, name, target

    # 1. The framework's layers.
    framework_files = [p for p in sorted((root / "framework").rglob("*")) if p.suffix in SOURCE_SUFFIXES]
    for path in framework_files:
        if (root / "framework/include/grove") in path.parents:
            own = grove_folder(path.relative_to(root / "framework/include/grove"))
        else:  # framework/src/<folder>/...
            own = path.relative_to(root / "framework/src").parts[0]
            if own == "gpu" and "multiwalk" in path.parts:
                own = "gpu/multiwalk"
        if own not in RANK:
            errors.append(f"{path.relative_to(root)}: folder '{own}' is in no layer of tools/check_includes.py")
            continue
        for where, name, target in check_file(path, [grove_include, path.parent], "framework"):
            if grove_include.resolve() not in target.parents:
                if (root / "framework/src").resolve() in target.parents:
                    continue  # a source file's private header beside it
                errors.append(f"{where}: \"{name}\" lies outside framework/include")
                continue
            other = grove_folder(target.relative_to(grove_include.resolve() / "grove"))
            if other not in RANK:
                errors.append(f"{where}: \"{name}\" is in folder '{other}', in no layer")
                continue
            if other != own:
                edges.add((own, other))
                if RANK[other] >= RANK[own]:
                    errors.append(f"{where}: '{own}' (layer {RANK[own]}) includes \"{name}\" of '{other}' "
                                  f"(layer {RANK[other]}): only lower layers may be included")

    # 2. user_templates/ alone.
    templates = root / "user_templates"
    for path in sorted(templates.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES:
            continue
        for where, name, target in check_file(path, [grove_include, templates], "user_templates"):
            if templates.resolve() not in target.parents and grove_include.resolve() not in target.parents:
                errors.append(f"{where}: \"{name}\" lies outside user_templates/ and grove")

    # 3. Each sample on its own.
    samples = root / "samples"
    common = samples / "common"
    for sample in sorted(p for p in samples.iterdir() if p.is_dir()):
        allowed = [sample.resolve(), common.resolve(), templates.resolve(), grove_include.resolve()]
        roots = [grove_include, templates, common]
        if sample.name == "benchmarks":
            # resident_benchmark --cpu-reference prints the CPU tree's error beside the device's
            # with the GPU tests' own host reference, so that both measure the same thing.
            allowed.append((root / "tests/force").resolve())
            roots.append(root / "tests/force")
        for path in sorted(sample.rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES:
                continue
            for where, name, target in check_file(path, roots, "samples"):
                if not any(base == target or base in target.parents for base in allowed):
                    errors.append(f"{where}: \"{name}\" belongs to another sample "
                                  f"({target.relative_to(root.resolve())}); shared code goes to samples/common/")

    for line in errors:
        print(line)
    if errors:
        print(f"check_includes: {len(errors)} violation(s)")
        return 1
    print(f"check_includes: {len(framework_files)} framework files, {len(edges)} folder edges, all downward; "
          f"user_templates/ and every sample self-contained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
