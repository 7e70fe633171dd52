#!/usr/bin/env python3
"""A performance model of one grove step, in the form of the Accelerated FDPS paper's section 5
(per-stage cost as a function of the particles per rank n, the rank count P, the network's
bandwidth and latency), calibrated from samples/scaling runs (tools/scaling_series.py output).

    tools/scaling_model.py doc/scaling/cpu_strong.jsonl doc/scaling/cpu_weak.jsonl \
        --predict-weak 262144 --predict-strong 16777216 [--bandwidth 12e9 --latency 2e-6]

Stages and their model (seconds per step; n = N / P; k the steps between decompositions):
  force      a_f * n * I(N)            I(N) = i0 + i1 ln N, interactions per particle (a line through
                                       one-rank runs at several N, else I proportional to ln N)
  local tree a_t * n
  integrate  a_i * n
  LET        a_l * L + 8 * lat * (P > 1) + (P - 1) * lat_a + b_let * L / B
             L = c_s * n^(2/3) + (P - 1): particles and superparticles received; the surface term
             from the domains' faces, the (P - 1) root superparticles of far ranks; lat_a the
             per-rank cost of the all-to-all of counts and the allgather of boxes
  global     a_g * (n + L)
  exchange   (a_x * n^(2/3) * b_fp / B + 26 * lat) * (P > 1)
  decompose  (d0 + S * 24 / B + a_s * S * log2 S + 2 * lat * log2 P) / k   (S = min(s P, 2^21)
             samples, s per rank, gathered and cut on rank 0; a_s = 3 ns, std::sort's cost; d0 the
             measured rest: drawing samples, latency)
a_* are seconds per item measured on the calibration machine (the smallest run for per-particle
costs, the multi-rank runs for the LET and exchange); B and lat describe the network of the
prediction (defaults: the calibration runs' own, fitted; give --bandwidth/--latency for another
machine). Prints each calibration point beside its prediction, then predicted step time and
efficiency up to 10^5 ranks.
"""
import argparse
import json
import math
import sys

BYTES_EPJ = 16     # an EPJ: float position and mass
BYTES_SPJ = 32     # a monopole SPJ: double position and mass
BYTES_FP = 96      # the sample's Body
MAX_TOTAL_SAMPLES = 1 << 21  # DomainInfo::kMaxTotalSamples


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs += [json.loads(l) for l in f if l.strip().startswith("{")]
    if not runs:
        sys.exit("scaling_model: no runs in %s" % " ".join(paths))
    return runs


class Model:
    def __init__(self, runs, decompose_every, samples_per_rank):
        self.k = decompose_every
        self.s = samples_per_rank
        one = [r for r in runs if r["ranks"] == 1]
        many = [r for r in runs if r["ranks"] > 1]
        if not one:
            sys.exit("scaling_model: the calibration needs a one-rank run")
        base = max(one, key=lambda r: r["n_total"])
        n = base["n_per_rank"]
        st = base["stages"]
        # Interactions per particle against ln N: a line through the one-rank runs when they span
        # several N and grow; otherwise the N log N assumption, I proportional to ln N.
        pts = sorted({(math.log(r["n_total"]), r["interactions_per_particle"]) for r in one})
        self.i0, self.i1 = 0.0, pts[-1][1] / pts[-1][0]
        if len(pts) >= 2 and pts[-1][0] > pts[0][0] and pts[-1][1] > pts[0][1]:
            (x0, y0), (x1, y1) = pts[0], pts[-1]
            self.i1 = (y1 - y0) / (x1 - x0)
            self.i0 = y0 - self.i1 * x0
        self.a_f = st["walk_force"] / (n * self.interactions(base["n_total"]))
        self.a_t = st["local_tree"] / n
        self.a_i = st["integrate"] / n
        # Multi-rank costs: LET, global tree, exchange, network (bandwidth, latency).
        self.c_s = 0.0
        self.a_l = self.a_g = self.a_x = 0.0
        self.lat, self.lat_a, self.B = 2e-6, 1e-6, 10e9
        if many:
            m = max(many, key=lambda r: r["ranks"])
            nm, P = m["n_per_rank"], m["ranks"]
            L = m["let_received_per_rank"]
            self.c_s = max(L - (P - 1), 0.0) / nm ** (2.0 / 3.0)
            self.a_g = m["stages"]["global_tree"] / (nm + L)
            # The LET stage: per-item work and the transfer, not separable from one point; the
            # calibration machine's bandwidth is taken as given (B) and the rest is per item.
            self.a_l = max(m["stages"]["let"] - L * BYTES_SPJ / self.B, 0.0) / max(L, 1.0)
            self.a_x = max(m["stages"]["exchange"], 1e-9) / (nm ** (2.0 / 3.0) * BYTES_FP / self.B)
        # Decomposition: the samples (capped in all, as DomainInfo caps them) sorted on rank 0.
        # Runs with a few thousand samples cannot show the sort's cost per sample (their time is
        # drawing samples and latency): a_s is std::sort's ~3 ns per element and log2 on one
        # core, and the measured time beyond it is a fixed cost d0 per decomposition.
        self.a_s = 3e-9
        self.d0 = 0.0
        timed = [r for r in runs if r["stages"]["decompose"] > 0]
        if timed:
            r = max(timed, key=lambda r: r["ranks"])
            S, P = self.samples(r["ranks"]), r["ranks"]
            modelled = S * 24 / self.B + self.a_s * S * math.log2(S) + 2 * self.lat * math.log2(max(P, 2))
            self.d0 = max(r["stages"]["decompose"] * self.k - modelled, 0.0)

    def samples(self, P):
        return min(self.s * P, MAX_TOTAL_SAMPLES)

    def interactions(self, N):
        return self.i0 + self.i1 * math.log(N)

    def let_items(self, n, P):
        return (self.c_s * n ** (2.0 / 3.0) + (P - 1)) if P > 1 else 0.0

    def stages(self, N, P, B=None, lat=None):
        B = B or self.B
        lat = self.lat if lat is None else lat
        n = N / P
        L = self.let_items(n, P)
        multi = 1.0 if P > 1 else 0.0
        s = {
            "walk_force": self.a_f * n * self.interactions(N),
            "local_tree": self.a_t * n,
            "integrate": self.a_i * n,
            "let": multi * (self.a_l * L + 8 * lat + (P - 1) * self.lat_a + L * BYTES_SPJ / B),
            "global_tree": multi * self.a_g * (n + L),
            "exchange": multi * (self.a_x * n ** (2.0 / 3.0) * BYTES_FP / B + 26 * lat),
            "decompose": (self.d0 + self.samples(P) * 24 / B
                          + self.a_s * self.samples(P) * math.log2(self.samples(P))
                          + 2 * lat * math.log2(max(P, 2))) / self.k,
        }
        s["step"] = sum(s.values())
        return s


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("series", nargs="+", help="JSON-line files of tools/scaling_series.py")
    p.add_argument("--path", help="calibrate from the runs of this path only (cpu, fmm, sph, multiwalk, resident)")
    p.add_argument("--label", help="calibrate from the runs with this label only")
    p.add_argument("--decompose-every", type=int, default=4)
    p.add_argument("--samples-per-rank", type=int, default=1000)
    p.add_argument("--bandwidth", type=float, help="network bytes/s of the predicted machine")
    p.add_argument("--latency", type=float, help="network latency (s) of the predicted machine")
    p.add_argument("--predict-weak", type=float, help="bodies per rank for a weak prediction")
    p.add_argument("--predict-strong", type=float, help="bodies in all for a strong prediction")
    a = p.parse_args()
    runs = load(a.series)
    if a.path:
        runs = [r for r in runs if r["path"] == a.path]
    if a.label:
        runs = [r for r in runs if r.get("label") == a.label]
    paths = sorted({r["path"] for r in runs})
    if len(paths) != 1:
        sys.exit("scaling_model: calibrate one path at a time (--path; these runs have %s)" % (paths or "none"))
    m = Model(runs, a.decompose_every, a.samples_per_rank)
    print("calibration: a_f %.3e s/interaction, I(N) = %.0f + %.1f ln N, a_t %.3e s/particle, a_i %.3e, "
          "LET surface c_s %.2f, a_l %.3e s/item, a_g %.3e" % (m.a_f, m.i0, m.i1, m.a_t, m.a_i, m.c_s, m.a_l, m.a_g))
    print("\nmeasured against the model (the calibration machine):")
    for r in sorted(runs, key=lambda r: (r["mode"], r["ranks"])):
        pred = m.stages(r["n_total"], r["ranks"])
        err = pred["step"] / r["seconds_per_step"] - 1.0
        print("  %-6s P %4d N %10d  measured %.4f s  model %.4f s  (%+.1f%%)" % (
            r["mode"], r["ranks"], r["n_total"], r["seconds_per_step"], pred["step"], 100 * err))
    ranks = [1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536, 100000]
    for kind, size in (("weak", a.predict_weak), ("strong", a.predict_strong)):
        if not size:
            continue
        print("\n%s prediction (%s = %.0f%s):" % (kind, "n per rank" if kind == "weak" else "N", size,
                                                  "" if a.bandwidth is None else ", B %.3g B/s, latency %.3g s" % (
                                                      a.bandwidth, a.latency or m.lat)))
        t1 = None
        for P in ranks:
            N = size * P if kind == "weak" else size
            if N / P < 1:
                break
            s = m.stages(N, P, a.bandwidth, a.latency)
            if t1 is None:
                t1 = s["step"]
                # weak: N log N corrected efficiency; strong: speed-up per rank
            eff = (t1 / s["step"]) * (math.log(N) / math.log(size)) if kind == "weak" else t1 / (s["step"] * P)
            print("  P %6d  step %.4g s  efficiency %.3f  (force %.3g, LET %.3g, global %.3g, exchange %.3g, "
                  "decompose %.3g)" % (P, s["step"], eff, s["walk_force"], s["let"], s["global_tree"], s["exchange"],
                                       s["decompose"]))


if __name__ == "__main__":
    main()
