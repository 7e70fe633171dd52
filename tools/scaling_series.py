#!/usr/bin/env python3
"""Runs a weak or strong scaling series of samples/scaling under mpirun and reports efficiencies.

    tools/scaling_series.py --ranks 1 2 --mode strong -n 262144 --path cpu --threads 1 \
        --out doc/scaling/cpu_strong                 # writes cpu_strong.jsonl and cpu_strong.png

Each rank count runs once (one JSON line from the sample); the series is written as JSON lines
with the efficiency against the smallest run added:
  strong: T(P0) P0 / (T(P) P)
  weak:   T(P0) / T(P), and corrected for the growth of a tree code's work per particle with N
          (N log N in all): T(P0) / T(P) x ln N(P) / ln N(P0). The measured interactions per
          particle are printed beside it; they also hold what the LET adds, which is a cost of
          running on more ranks and is not corrected for.
With matplotlib (python3-matplotlib) it also plots the efficiency and the per-stage seconds
against ranks (PNG). Extra arguments after -- go to the sample.
"""
import argparse
import json
import math
import os
import subprocess
import sys

STAGES = ["decompose", "exchange", "local_tree", "let", "global_tree", "walk_force", "integrate"]


def run_one(args, ranks, extra):
    exe = args.exe
    cmd = [exe, "--mode", args.mode, "-n", str(args.n), "--path", args.path, "--steps", str(args.steps)] + extra
    if ranks > 1 or args.always_mpirun:
        # OpenMPI binds each of up to 2 ranks to one core by default: their OpenMP threads would
        # share it. Threaded ranks run unbound (--mpirun-args replaces this).
        launch = args.mpirun_args.split() if args.mpirun_args is not None else (
            ["--bind-to", "none"] if args.threads > 1 else [])
        cmd = ["mpirun", "-np", str(ranks)] + (["--oversubscribe"] if args.oversubscribe else []) + launch + cmd
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("scaling_series: %s failed (rc %d):\n%s%s" % (" ".join(cmd), out.returncode, out.stdout, out.stderr))
    lines = [l for l in out.stdout.splitlines() if l.startswith('{"sample":"scaling"')]
    if not lines:
        sys.exit("scaling_series: no JSON line from %s:\n%s" % (" ".join(cmd), out.stdout))
    return json.loads(lines[-1])


def add_efficiency(series):
    base = min(series, key=lambda r: r["ranks"])
    for r in series:
        if r["mode"] == "strong":
            r["efficiency"] = base["seconds_per_step"] * base["ranks"] / (r["seconds_per_step"] * r["ranks"])
            r["speedup"] = base["seconds_per_step"] / r["seconds_per_step"]
        else:
            raw = base["seconds_per_step"] / r["seconds_per_step"]
            r["efficiency"] = raw
            r["efficiency_nlogn"] = raw * math.log(r["n_total"]) / math.log(base["n_total"])
    return series


def plot(series, png, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("scaling_series: matplotlib not found (apt install python3-matplotlib): no plot", file=sys.stderr)
        return
    ranks = [r["ranks"] for r in series]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(ranks, [r["efficiency"] for r in series], "o-", label="efficiency")
    if "efficiency_nlogn" in series[0]:
        a.plot(ranks, [r["efficiency_nlogn"] for r in series], "s--", label="efficiency (N log N corrected)")
    a.axhline(1.0, color="grey", lw=0.5)
    a.set_xscale("log", base=2)
    a.set_xlabel("ranks")
    a.set_ylabel("efficiency")
    a.set_ylim(0, 1.2)
    a.legend()
    bottom = [0.0] * len(series)
    for s in STAGES:
        v = [1e3 * r["stages"][s] for r in series]
        b.bar([str(x) for x in ranks], v, bottom=bottom, label=s)
        bottom = [x + y for x, y in zip(bottom, v)]
    b.plot([str(x) for x in ranks], [1e3 * r["seconds_per_step"] for r in series], "k*", label="step")
    b.set_xlabel("ranks")
    b.set_ylabel("ms per step (slowest rank per stage)")
    b.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print("scaling_series: wrote", png)


def title_of(args):
    return "%s path, %s scaling, N%s = %d, %d thread(s) per rank" % (
        args.path, args.mode, " per rank" if args.mode == "weak" else "", args.n, args.threads)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--exe", default="build/samples/scaling/scaling")
    p.add_argument("--ranks", type=int, nargs="+")
    p.add_argument("--mode", choices=["weak", "strong"])
    p.add_argument("-n", type=int, help="bodies per rank (weak) or in all (strong)")
    p.add_argument("--path", default="cpu", choices=["cpu", "fmm", "sph", "multiwalk", "resident", "sph-resident"])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--threads", type=int, default=1, help="OpenMP threads per rank")
    p.add_argument("--oversubscribe", action="store_true", help="pass --oversubscribe to mpirun")
    p.add_argument("--always-mpirun", action="store_true", help="start one rank through mpirun too")
    p.add_argument("--mpirun-args", help="extra mpirun options (default: --bind-to none for threaded ranks)")
    p.add_argument("--repeat", type=int, default=1, help="runs per rank count; the fastest is kept")
    p.add_argument("--out", required=True, help="output prefix: PREFIX.jsonl and PREFIX.png")
    p.add_argument("--plot-only", action="store_true", help="plot PREFIX.jsonl again, run nothing")
    args = p.parse_args(argv)
    if args.plot_only:
        with open(args.out + ".jsonl") as f:
            series = [json.loads(l) for l in f if l.strip()]
        args.path, args.mode, args.threads = series[0]["path"], series[0]["mode"], series[0]["threads"]
        args.n = series[0]["n_per_rank"] if args.mode == "weak" else series[0]["n_total"]
        plot(series, args.out + ".png", title_of(args))
        return
    if not (args.ranks and args.mode and args.n):
        p.error("--ranks, --mode and -n are needed to run a series")
    series = []
    for ranks in args.ranks:
        runs = [run_one(args, ranks, extra) for _ in range(args.repeat)]
        series.append(min(runs, key=lambda r: r["seconds_per_step"]))
        print(json.dumps(series[-1]), flush=True)
    add_efficiency(series)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".jsonl", "w") as f:
        for r in series:
            f.write(json.dumps(r) + "\n")
    for r in series:
        eff = "efficiency %.3f" % r["efficiency"]
        if "efficiency_nlogn" in r:
            eff += " (N log N corrected %.3f)" % r["efficiency_nlogn"]
        if "speedup" in r:
            eff += ", speed-up %.2fx" % r["speedup"]
        print("ranks %3d  N %10d  %.4f s/step  %s" % (r["ranks"], r["n_total"], r["seconds_per_step"], eff))
    plot(series, args.out + ".png", title_of(args))


if __name__ == "__main__":
    main()
