#!/usr/bin/env python3
"""A performance model of one grove step, in the form of the Accelerated FDPS paper's section 5
(per-stage cost as a function of the particles per rank n, the rank count P, the network's
bandwidth and latency), calibrated from samples/scaling runs (tools/scaling_series.py output).

    tools/scaling_model.py doc/scaling/h100x4/run2/resident_weak.jsonl \\
        doc/scaling/h100x4/run2/resident_strong.jsonl --path resident --calibrate-ranks 1 2 \\
        --predict-weak 4194304 --bandwidth 25e9 --latency 3e-6

Stages, seconds per step (n = N / P; k = --reuse, the steps per list build; the exchange and the
decomposition run on list-building steps only, the decomposition every --decompose-every of them):
  force       a_f n I(N)           I(N) = i0 + i1 ln N interactions per particle (a line through
                                   the one-rank runs at two N; the LET's cells are in the measured I)
  local tree  a_t n                integrate  a_i n
  LET         a_l L + e (2 q lat + b_item L / B) + (lat log2 P + P s_sum / B) / k
              L = c_s n^(2/3) items received (the domain's surface), q = min(P - 1, --peers) peers
              (sent to and received from: the LET is sparse, far ranks are served by the
              allgathered summaries of s_sum bytes each, redone on list-building steps); e, the
              share of the transfer the overlap does not hide
  global tree a_g (n + L + F)      F = P - 1 - q far ranks' root superparticles
  exchange    (a_x n^(2/3) b_fp / B + 2 m lat + lat log2 P) / k   (a face's movers, m = min(P - 1, 26)
                                   neighbours, the sparse count exchange's barrier)
  decompose   r (h_L (a_h n + 2 lat log2 P) + H(P) 8 / B) / (k d)   (counted cuts: r rounds of h_L
                                   levels of device histograms summed over all ranks; H(P) = bins
                                   times the searches of all levels, about P bins: what the
                                   allreduces carry)
a_* are seconds per item measured on the calibration machine: the one-rank runs give the local
costs, the calibration's multi-rank runs (--calibrate-ranks) the LET, global tree, exchange and
decomposition. B and lat: the calibration machine's (--cal-bandwidth, --cal-latency: one node's
device-to-device and MPI figures), or given for the predicted machine. Prints the calibration
points and the other runs beside the model, then the predicted step and efficiency up to 10^5 ranks
with every stage's cost written out.
"""
import argparse
import json
import math
import sys

BYTES_EPJ = 16       # an EPJ: float position and mass
BYTES_FP = 96        # the sample's Body
BYTES_SUMMARY = 80   # a rank's allgathered summary: box, root centre and superparticle
BINS, ROUNDS = 256, 5


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs += [json.loads(l) for l in f if l.strip().startswith("{")]
    if not runs:
        sys.exit("scaling_model: no runs in %s" % " ".join(paths))
    return runs


def levels(P):
    return max(1, math.ceil(math.log2(P))) if P > 1 else 0


class Model:
    def __init__(self, runs, a):
        self.k, self.d, self.K = a.reuse, a.decompose_every, a.peers
        self.B, self.lat = a.cal_bandwidth, a.cal_latency
        one = [r for r in runs if r["ranks"] == 1]
        many = [r for r in runs if r["ranks"] in a.calibrate_ranks and r["ranks"] > 1]
        if not one:
            sys.exit("scaling_model: the calibration needs a one-rank run")
        # Interactions per particle against ln N: a line through the one-rank runs at two N.
        pts = sorted({(math.log(r["n_total"]), r["interactions_per_particle"]) for r in one})
        self.i0, self.i1 = 0.0, pts[-1][1] / pts[-1][0]
        if len(pts) >= 2 and pts[-1][0] > pts[0][0]:
            (x0, y0), (x1, y1) = pts[0], pts[-1]
            self.i1 = (y1 - y0) / (x1 - x0)
            self.i0 = y0 - self.i1 * x0
        base = max(one, key=lambda r: r["n_total"])
        n, st = base["n_per_rank"], base["stages"]
        self.a_f = st["walk_force"] / (n * self.interactions(base["n_total"]))
        self.a_t = st["local_tree"] / n
        self.a_i = st["integrate"] / n
        self.c_s = self.a_l = self.a_g = self.a_x = self.a_h = 0.0
        self.e = 1.0
        if many:
            m = max(many, key=lambda r: (r["ranks"], r["n_total"]))
            nm, P, s = m["n_per_rank"], m["ranks"], m["stages"]
            L = m["let_received_per_rank"]
            q = min(P - 1, self.K)
            self.c_s = L / nm ** (2.0 / 3.0)
            self.a_g = s["global_tree"] / (nm + L + max(P - 1 - q, 0))
            # The LET's measured time: its per-item work, the exposed transfer and the summaries.
            # One point cannot separate the first two: the per-item work takes what the network
            # terms do not explain, with all of the transfer counted as exposed (e = 1).
            network = 2 * q * self.lat + BYTES_EPJ * L / self.B + (self.lat * math.log2(P) + P * BYTES_SUMMARY / self.B) / self.k
            self.a_l = max(s["let"] - network, 0.0) / max(L, 1.0)
            self.a_x = max(s["exchange"] * self.k - 2 * min(P - 1, 26) * self.lat - self.lat * math.log2(P), 1e-12) / (
                nm ** (2.0 / 3.0) * BYTES_FP / self.B)
            dec = s["decompose"] * self.k * self.d
            per_level = ROUNDS * levels(P)
            self.a_h = max(dec - ROUNDS * (levels(P) * 2 * self.lat * math.log2(P) + BINS * P * 8 / self.B), 0.0) / (
                per_level * nm)

    def interactions(self, N):
        return self.i0 + self.i1 * math.log(N)

    def stages(self, N, P, B=None, lat=None):
        B = B or self.B
        lat = self.lat if lat is None else lat
        n = N / P
        multi = P > 1
        q = min(P - 1, self.K)
        L = self.c_s * n ** (2.0 / 3.0) if multi else 0.0
        F = max(P - 1 - q, 0)
        s = {
            "walk_force": self.a_f * n * self.interactions(N),
            "local_tree": self.a_t * n,
            "integrate": self.a_i * n,
            "let": 0.0, "let_network": 0.0, "let_summaries": 0.0, "global_tree": 0.0, "exchange": 0.0,
            "decompose": 0.0,
        }
        if multi:
            s["let_network"] = self.e * (2 * q * lat + BYTES_EPJ * L / B)
            s["let_summaries"] = (lat * math.log2(P) + P * BYTES_SUMMARY / B) / self.k
            s["let"] = self.a_l * L + s["let_network"] + s["let_summaries"]
            s["global_tree"] = self.a_g * (n + L + F)
            s["exchange"] = (self.a_x * n ** (2.0 / 3.0) * BYTES_FP / B + 2 * min(P - 1, 26) * lat + lat * math.log2(P)) / self.k
            s["decompose"] = ROUNDS * (levels(P) * (self.a_h * n + 2 * lat * math.log2(P)) + BINS * P * 8 / B) / (
                self.k * self.d)
        s["step"] = sum(v for key, v in s.items() if key not in ("let_network", "let_summaries"))
        return s


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("series", nargs="+", help="JSON-line files of tools/scaling_series.py")
    p.add_argument("--path", help="calibrate from the runs of this path only")
    p.add_argument("--calibrate-ranks", type=int, nargs="+", default=[1, 2],
                   help="rank counts the calibration uses (the others are predictions to check)")
    p.add_argument("--reuse", type=int, default=16, help="steps per list build (--n-reuse of the runs)")
    p.add_argument("--decompose-every", type=int, default=1,
                   help="list-building steps per decomposition (samples/scaling: 1 with --n-reuse 16)")
    p.add_argument("--peers", type=int, default=52,
                   help="most LET peers of a rank (sent to plus received from) at large P: about 2 x 26 in 3-D")
    p.add_argument("--cal-bandwidth", type=float, default=50e9, help="calibration machine's transfer bytes/s")
    p.add_argument("--cal-latency", type=float, default=5e-6, help="calibration machine's message latency (s)")
    p.add_argument("--counting-pass", type=float,
                   help="seconds per particle of one counted-cut histogram pass (a_h), in place of the calibration's "
                        "(which holds the wait for the slowest rank that the decomposition's first collective absorbs)")
    p.add_argument("--bandwidth", type=float, help="bytes/s per GPU of the predicted machine's network")
    p.add_argument("--latency", type=float, help="message latency (s) of the predicted machine")
    p.add_argument("--predict-weak", type=float, help="bodies per rank for a weak prediction")
    p.add_argument("--predict-strong", type=float, help="bodies in all for a strong prediction")
    a = p.parse_args()
    runs = load(a.series)
    if a.path:
        runs = [r for r in runs if r["path"] == a.path]
    m = Model(runs, a)
    if a.counting_pass is not None:
        m.a_h = a.counting_pass
    print("calibration: a_f %.3e s/interaction, I(N) = %.0f + %.1f ln N, a_t %.3e s/particle, a_i %.3e, "
          "LET surface c_s %.2f, a_l %.3e s/item, a_g %.3e, a_x %.3e, a_h %.3e" % (
              m.a_f, m.i0, m.i1, m.a_t, m.a_i, m.c_s, m.a_l, m.a_g, m.a_x, m.a_h))
    print("\nmeasured against the model (the calibration machine; * calibration points):")
    for r in sorted(runs, key=lambda r: (r["mode"], r["ranks"])):
        pred = m.stages(r["n_total"], r["ranks"])
        err = pred["step"] / r["seconds_per_step"] - 1.0
        mark = "*" if r["ranks"] in a.calibrate_ranks else " "
        print("  %s %-6s P %4d N %10d  measured %.4f s  model %.4f s  (%+.1f%%)" % (
            mark, r["mode"], r["ranks"], r["n_total"], r["seconds_per_step"], pred["step"], 100 * err))
    ranks = [1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536, 100000]
    for kind, size in (("weak", a.predict_weak), ("strong", a.predict_strong)):
        if not size:
            continue
        print("\n%s prediction (%s = %.0f; network %s):" % (
            kind, "n per rank" if kind == "weak" else "N", size,
            "the calibration machine's" if a.bandwidth is None else "B %.3g B/s, latency %.3g s" % (
                a.bandwidth, a.latency if a.latency is not None else m.lat)))
        t1 = None
        for P in ranks:
            N = size * P if kind == "weak" else size
            if N / P < 1:
                break
            s = m.stages(N, P, a.bandwidth if P > 1 else None, a.latency if P > 1 else None)
            if t1 is None:
                t1 = s["step"]
            eff = (t1 / s["step"]) * (m.interactions(N) / m.interactions(size)) if kind == "weak" else t1 / (s["step"] * P)
            print("  P %6d  step %.4g s  efficiency %.3f  (force %.3g, tree %.3g, LET %.3g [network %.3g, summaries %.3g], "
                  "global %.3g, exchange %.3g, decompose %.3g)" % (
                      P, s["step"], eff, s["walk_force"], s["local_tree"], s["let"], s["let_network"], s["let_summaries"],
                      s["global_tree"], s["exchange"], s["decompose"]))
    print("\n(weak efficiency: T(1) / T(P), times the interactions per particle's growth I(N P) / I(N), so that it "
          "counts what the ranks cost, not the tree's own growth with N)")


if __name__ == "__main__":
    main()
