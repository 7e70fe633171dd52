#pragma once
// What the t = 0 energies must be, and how far the particle model may stand from the analytic
// sphere (W = -2/3, thermal 0.05, kinetic 0). doc/evrard.md, "start check", derives the bounds:
//
//  discreteness  N point masses on a (stretched) lattice miss each lattice cell's own energy:
//                W_particles - W_continuum = +sum_i 0.9411 m^2 / d_i, d_i = (m / rho_i)^(1/3)
//                (0.9411 G M^2 / a is the self-energy of a uniform cube of side a; Waldvogel
//                1976). Softening caps a particle's missing self-energy at m^2 / (2 eps)
//                (Plummer: the softened self-term), so each term is min(0.9411 / d_i, 1/(2 eps)).
//                At N = 3000 this is about 3e-3 (0.4 % of |W|).
//  softening     the softened potential is shallower by psi = phi_soft + 1/r; for a density
//                smooth on the softening scale W_soft - W = (1/2) int rho^2 dV * int psi dV with
//                int rho^2 dV = 1/pi for this sphere, and int psi dV = (2 pi/3) <r^2>_kernel =
//                0.15 pi h_s^2 for the spline (h_s = 2.8 eps); 2 pi [R^2 - R sqrt(R^2+eps^2) +
//                eps^2 asinh(R/eps)] for Plummer, cut at R = 1 (its tail is long-ranged).
//                At eps = 0.01 (spline): 6e-5.
//  tree          W from the tree differs from direct summation by the cells' neglected next
//                multipole: relative ~ theta^2 (monopole) or theta^3 (quadrupole); allowed
//                4e-3 theta^2 and 8e-3 theta^3, i.e. 1e-3 of |W| at theta = 0.5 (Barnes-Hut force
//                errors there are ~1e-3, Hernquist 1987; potential errors are smaller).
// The bound on |W_direct - W_analytic| is twice the sum of the first two estimates: the lattice
// cells are stretched 1.5 : 1 : 1 (radial : tangential), not cubes, which changes the cube's
// coefficient by some per cent, and the two effects overlap where eps is comparable to d.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "gravity_kernel.hpp"
#include "initial_conditions.hpp"

namespace evrard {

inline double softeningPotentialOffset(const Softening& s) {
  constexpr double pi = std::numbers::pi;
  const double int_rho2 = 1.0 / pi;
  double int_psi;
  if (s.law == SofteningLaw::kSpline) {
    const double h = s.splineSupport();
    int_psi = 0.15 * pi * h * h;
  } else {
    const double e = s.eps, r = 1.0;
    int_psi = 2.0 * pi * (r * r - r * std::sqrt(r * r + e * e) + e * e * std::asinh(r / e));
  }
  return 0.5 * int_rho2 * int_psi;
}

// Sum over this rank's particles of the missing self-cell energy (collective: summed over ranks).
template <class PSys>
double discretenessPotentialOffset(const PSys& gas, const Softening& s) {
  constexpr double cube_self_energy = 0.9411;
  double sum = 0;
  for (const EvrardParticle& p : gas) {
    const double r = std::max(grove::norm(p.pos), 1e-6);
    const double d = std::cbrt(p.mass / EvrardSphere::density(r));
    sum += p.mass * p.mass * std::min(cube_self_energy / d, 0.5 / s.eps);
  }
  return gas.comm().allreduceSum(sum);
}

inline double treePotentialTolerance(double theta, bool quadrupole) {
  return quadrupole ? 8e-3 * theta * theta * theta : 4e-3 * theta * theta;
}

}  // namespace evrard
