#!/usr/bin/env python3
"""Exact Riemann solution of the Sod shock tube, independent of the C++ solver in samples/sph.

  tools/sod_exact.py                      prints the star state (Toro 2009, table 4.3: p* = 0.30313, u* = 0.92745)
  tools/sod_exact.py --check OUTPUT_DIR   compares the exact columns of OUTPUT_DIR/profiles.csv (written by
                                          samples/sph from its C++ solver) with this solver, bin by bin

Pure Python (no numpy), so plot_sod.py can import it.
"""
import argparse
import math
import sys

GAMMA = 1.4
LEFT = (1.0, 0.0, 1.0)     # density, velocity, pressure
RIGHT = (0.125, 0.0, 0.1)


class Riemann:
    """Star state by Newton iteration on the pressure function, then sampling at s = x / t."""

    def __init__(self, left=LEFT, right=RIGHT, gamma=GAMMA):
        self.l, self.r, self.g = left, right, gamma
        self.cl = math.sqrt(gamma * left[2] / left[0])
        self.cr = math.sqrt(gamma * right[2] / right[0])
        p = max(0.5 * (left[2] + right[2]), 1e-8)
        for _ in range(100):
            fl, dfl = self._f(p, left, self.cl)
            fr, dfr = self._f(p, right, self.cr)
            nxt = p - (fl + fr + right[1] - left[1]) / (dfl + dfr)
            nxt = nxt if nxt > 0 else 0.5 * p
            done = abs(nxt - p) < 1e-15 * p
            p = nxt
            if done:
                break
        fl, _ = self._f(p, left, self.cl)
        fr, _ = self._f(p, right, self.cr)
        self.p_star = p
        self.u_star = 0.5 * (left[1] + right[1]) + 0.5 * (fr - fl)

    def _f(self, p, k, c):
        g = self.g
        rho, _, pk = k
        if p > pk:  # shock
            a, b = 2.0 / ((g + 1.0) * rho), (g - 1.0) / (g + 1.0) * pk
            q = math.sqrt(a / (p + b))
            return (p - pk) * q, q * (1.0 - 0.5 * (p - pk) / (p + b))
        return (2.0 * c / (g - 1.0) * ((p / pk) ** ((g - 1.0) / (2.0 * g)) - 1.0),
                (p / pk) ** (-(g + 1.0) / (2.0 * g)) / (rho * c))

    def star_density(self, k):
        g, ratio = self.g, self.p_star / k[2]
        if ratio > 1.0:
            g6 = (g - 1.0) / (g + 1.0)
            return k[0] * (ratio + g6) / (g6 * ratio + 1.0)
        return k[0] * ratio ** (1.0 / g)

    def sample(self, s):
        """(density, velocity, pressure) at s = x / t; mirror the right side onto the left."""
        if s <= self.u_star:
            return self._side(s, self.l, self.cl, +1.0)
        rho, u, p = self._side(-s, (self.r[0], -self.r[1], self.r[2]), self.cr, -1.0)
        return rho, -u, p

    def _side(self, s, k, c, sign):
        # The left-facing wave of state k; the right side arrives mirrored (x -> -x, u -> -u),
        # sign = -1, and sample() mirrors the result back.
        g = self.g
        u_star = self.u_star * sign
        star = (self.star_density(k), u_star, self.p_star)
        ratio = self.p_star / k[2]
        if ratio > 1.0:
            shock = k[1] - c * math.sqrt((g + 1.0) / (2.0 * g) * ratio + (g - 1.0) / (2.0 * g))
            return k if s <= shock else (star[0], u_star, star[2])
        head = k[1] - c
        tail = u_star - c * ratio ** ((g - 1.0) / (2.0 * g))
        if s <= head:
            return k
        if s >= tail:
            return star[0], u_star, star[2]
        u = 2.0 / (g + 1.0) * (c + 0.5 * (g - 1.0) * k[1] + s)
        cf = 2.0 / (g + 1.0) * (c + 0.5 * (g - 1.0) * (k[1] - s))
        return k[0] * (cf / c) ** (2.0 / (g - 1.0)), u, k[2] * (cf / c) ** (2.0 * g / (g - 1.0))


def periodic_tube(solver, x, t, interface=0.5, length=1.0):
    """The state at x in [0, length) of the periodic tube: Sod about x = 0.5, its mirror about x = 0 = 1."""
    d = x - interface
    if t <= 0.0:
        return solver.l if d < 0 else solver.r
    if abs(d) <= 0.25 * length:
        return solver.sample(d / t)
    e = x if x < interface else x - length
    rho, u, p = solver.sample(-e / t)
    return rho, -u, p


def read_profiles(out_dir):
    with open(f"{out_dir}/profiles.csv") as f:
        time = float(f.readline().split()[2])
        header = f.readline().strip().split(",")
        rows = [dict(zip(header, map(float, line.split(",")))) for line in f if line.strip()]
    return time, rows


def check(out_dir):
    time, rows = read_profiles(out_dir)
    solver = Riemann()
    width = rows[1]["x"] - rows[0]["x"]
    worst = 0.0
    for row in rows:
        subs = [periodic_tube(solver, row["x"] + width * ((k + 0.5) / 64 - 0.5), time) for k in range(64)]
        mean = [sum(s[q] for s in subs) / 64 for q in range(3)]
        for q, name in enumerate(("exact_density", "exact_velocity_x", "exact_pressure")):
            worst = max(worst, abs(mean[q] - row[name]))
    print(f"{out_dir}/profiles.csv: largest difference between the C++ and Python exact solutions: {worst:.3e}")
    return 0 if worst < 1e-8 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", metavar="OUTPUT_DIR")
    args = parser.parse_args()
    solver = Riemann()
    print(f"p* = {solver.p_star:.6f}  u* = {solver.u_star:.6f}  rho*L = {solver.star_density(LEFT):.6f}  "
          f"rho*R = {solver.star_density(RIGHT):.6f}")
    return check(args.check) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
