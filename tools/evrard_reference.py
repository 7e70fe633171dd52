#!/usr/bin/env python3
"""1-D reference solution of the Evrard (1988) collapse: the energies against time.

A spherically symmetric Lagrangian hydrodynamics code with self-gravity (the enclosed mass) and
von Neumann-Richtmyer artificial viscosity, the kind of code whose curves the SPH papers compare
with (Evrard 1988; Steinmetz & Mueller 1993 used PPM). G = M = R = 1, rho = 1 / (2 pi r) for
r < 1, u = 0.05, at rest, gamma = 5/3.

Discretisation (staggered, as Richtmyer & Morton 1967, ch. 10):
  zones j = 0 .. n-1 of equal mass 1/n between nodes j and j + 1 hold density, internal energy,
  pressure and viscosity; nodes i = 1 .. n hold radius and velocity (node 0 stays at r = 0).
  Node masses mu_i = (dm_{i-1} + dm_i) / 2, the centre's half zone given to node 1, so that
  gravity is that of thin shells: a_i = -(M_<i + mu_i / 2) / r_i^2 and
  W = -sum_i mu_i (M_<i + mu_i / 2) / r_i, whose gradient is exactly that force.
  Pressure force on node i: -4 pi r_i^2 (P_i + q_i - P_{i-1} - q_{i-1}) / mu_i (zero pressure outside).
  Kick-drift-kick in time; zone energies by de = -(P_mid + q_mid) dV / dm with P_mid, q_mid the
  means of the old and new values (the pressure's solved exactly for the ideal gas), which is the
  work the two half kicks do, so the scheme conserves energy to O(dt^2); viscosity
  q = rho (c2 dv^2 + c1 c |dv|) in compressing zones (dv = v_out - v_in < 0), from the half-step
  velocities.

Output: CSV time,kinetic,thermal,potential,total every --dt-out, and a summary (peak thermal
energy and its time, final energies, energy conservation) on standard output.

  /usr/bin/python3 tools/evrard_reference.py --zones 2000 --output evrard_reference.csv
"""
import argparse
import math
import sys
import time as wallclock

import numpy as np

GAMMA = 5.0 / 3.0
U0 = 0.05


class Sphere:
    def __init__(self, zones, c2, c1):
        n = zones
        self.c2, self.c1 = c2, c1
        self.dm = np.full(n, 1.0 / n)
        enclosed = np.concatenate(([0.0], np.cumsum(self.dm)))
        enclosed[-1] = 1.0
        self.r = np.sqrt(enclosed)  # M(r) = r^2
        self.v = np.zeros(n + 1)
        self.e = np.full(n, U0)
        mu = np.zeros(n + 1)
        mu[1:] += 0.5 * self.dm
        mu[:-1] += 0.5 * self.dm
        mu[1] += mu[0]  # the centre's half zone rides on node 1 (node 0 is fixed at r = 0)
        mu[0] = 0.0
        self.mu = mu
        # M_<i + mu_i / 2: the mass a shell at node i feels (the shells inside and half its own)
        self.m_grav = np.cumsum(mu) - 0.5 * mu
        self.volume = self.volumes()
        self.rho = self.dm / self.volume
        self.p = (GAMMA - 1.0) * self.rho * self.e
        self.q = np.zeros(n)
        self.a = self.accelerations()

    def volumes(self):
        r3 = self.r ** 3
        return (4.0 * math.pi / 3.0) * (r3[1:] - r3[:-1])

    def accelerations(self):
        a = np.zeros_like(self.r)
        stress = self.p + self.q
        # stress jump across node i: zone i outside (0 beyond the surface), zone i-1 inside
        outside = np.concatenate((stress[1:], [0.0]))
        a[1:] = -4.0 * math.pi * self.r[1:] ** 2 * (outside - stress) / self.mu[1:]
        a[1:] -= self.m_grav[1:] / self.r[1:] ** 2
        return a

    def viscosity(self, v):
        dv = v[1:] - v[:-1]
        c = np.sqrt(GAMMA * self.p / self.rho)
        compress = np.minimum(dv, 0.0)
        return self.rho * (self.c2 * compress ** 2 + self.c1 * c * np.abs(compress))

    def time_step(self, cfl):
        dr = self.r[1:] - self.r[:-1]
        c = np.sqrt(GAMMA * self.p / self.rho)
        dv = np.abs(np.minimum(self.v[1:] - self.v[:-1], 0.0))
        signal = c + 2.0 * self.c2 * dv + 1e-30
        dt_courant = cfl * np.min(dr / signal)
        # free fall of the densest zone: keeps early steps (cold, c small) resolved
        dt_gravity = 0.05 / math.sqrt(np.max(self.rho))
        return min(dt_courant, dt_gravity)

    def step(self, dt):
        v_half = self.v + 0.5 * dt * self.a
        v_half[0] = 0.0
        self.r = self.r + dt * v_half
        if np.any(np.diff(self.r) <= 0.0):
            raise RuntimeError("evrard_reference: shells crossed; lower --cfl")
        volume = self.volumes()
        d_volume = volume - self.volume
        self.rho = self.dm / volume
        q_old = self.q
        self.q = self.viscosity(v_half)
        # The kicks apply the old q over the first half step and the new one over the second, so
        # the work they do is that of the mean q; the energy equation uses the same mean (with a
        # single q the scheme loses energy at first order in dt at the shocks).
        # e1 = e0 - (P0/2 + P1/2 + q_mean) dV/dm with P1 = (gamma-1) e1 / V1 dm: linear in e1
        x = d_volume / self.dm
        q_mean = 0.5 * (q_old + self.q)
        self.e = (self.e - (0.5 * self.p + q_mean) * x) / (1.0 + 0.5 * (GAMMA - 1.0) * self.rho * x)
        if np.any(self.e <= 0.0):
            raise RuntimeError("evrard_reference: negative internal energy; lower --cfl")
        self.p = (GAMMA - 1.0) * self.rho * self.e
        self.volume = volume
        self.a = self.accelerations()
        self.v = v_half + 0.5 * dt * self.a
        self.v[0] = 0.0

    def energies(self):
        kinetic = 0.5 * np.sum(self.mu * self.v ** 2)
        thermal = np.sum(self.dm * self.e)
        potential = -np.sum(self.mu[1:] * self.m_grav[1:] / self.r[1:])
        return kinetic, thermal, potential


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zones", type=int, default=2000, help="equal-mass shells")
    ap.add_argument("--t-end", type=float, default=3.0)
    ap.add_argument("--dt-out", type=float, default=0.01, help="time between output rows")
    ap.add_argument("--cfl", type=float, default=0.25)
    ap.add_argument("--c2", type=float, default=2.0, help="quadratic viscosity coefficient")
    ap.add_argument("--c1", type=float, default=0.1, help="linear viscosity coefficient")
    ap.add_argument("--output", default="evrard_reference.csv")
    args = ap.parse_args()

    s = Sphere(args.zones, args.c2, args.c1)
    start = wallclock.time()
    t, steps = 0.0, 0
    k, u, w = s.energies()
    e0 = k + u + w
    rows = [(0.0, k, u, w, k + u + w)]
    peak = (u, 0.0)
    next_out = args.dt_out
    while t < args.t_end * (1 - 1e-12):
        target = min(next_out, args.t_end)
        dt = min(s.time_step(args.cfl), target - t)
        s.step(dt)
        steps += 1
        t = target if dt == target - t else t + dt
        k, u, w = s.energies()
        if u > peak[0]:
            peak = (u, t)
        if t == target:
            rows.append((t, k, u, w, k + u + w))
            next_out += args.dt_out
    with open(args.output, "w") as f:
        f.write(f"# evrard_reference.py: {args.zones} zones, cfl {args.cfl}, viscosity c2 {args.c2} c1 {args.c1}\n")
        f.write("time,kinetic,thermal,potential,total\n")
        for row in rows:
            f.write(",".join(f"{x:.8g}" for x in row) + "\n")
    drift = max(abs(r[4] - e0) for r in rows) / abs(e0)
    kin_peak = max(rows, key=lambda r: r[1])
    w_min = min(rows, key=lambda r: r[3])
    print(f"{args.zones} zones, {steps} steps, {wallclock.time() - start:.1f} s; written {args.output}")
    print(f"t = 0: K = {rows[0][1]:.6f}  U = {rows[0][2]:.6f}  W = {rows[0][3]:.6f}  E = {e0:.6f}")
    print(f"thermal peak {peak[0]:.5f} at t = {peak[1]:.4f}; kinetic peak {kin_peak[1]:.5f} at t = {kin_peak[0]:.2f}; "
          f"W minimum {w_min[3]:.5f} at t = {w_min[0]:.2f}")
    print(f"t = {rows[-1][0]:.2f}: K = {rows[-1][1]:.5f}  U = {rows[-1][2]:.5f}  W = {rows[-1][3]:.5f}  "
          f"E = {rows[-1][4]:.6f}; largest |E - E0| / |E0| = {drift:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
