#pragma once
// The SPH sample's formulas, written once for every path that computes them: the CPU kernels
// (density_kernel.hpp, hydro_kernel.hpp), the hand-written CUDA kernels
// (user_templates/cuda/sph_walk_kernels.cuh) and the GPU engine's pairwise functors
// (user_templates/cuda/sph_interactions.cuh). nvcc compiles them for host and device
// (SPH_HOST_DEVICE); a host compiler sees plain inline functions. Each function keeps the CPU
// kernels' order of operations, so the GPU paths differ from the CPU only by summation order and
// fused multiply-adds (about 1e-15 relative).
//
// Also here: the per-particle images the GPU paths send to the device (precomputed powers of h,
// as the CPU kernels precompute them), and the step-by-step h iteration, so the three paths run
// the same Newton-bisection sequence. No CUDA header and no grove header beyond the particle
// classes' vector type: a .cu file may include it (doc/gpu.md, "what a .cu file may include").
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gas_particles.hpp"
#include "host_device.hpp"
#include "wendland_c2.hpp"

namespace sph {

struct DensityParameters {
  double n_neighbours = 200;  // target (4 pi / 3) h^3 rho / m
  double tolerance = 1e-9;    // relative, on the neighbour number
  int max_iterations = 100;   // Newton steps fall back to bisection, so 100 is never reached in practice
};

struct HydroParameters {
  double alpha = 1.0;  // artificial viscosity strength
};

// The h iteration solves S0(h) = target, S0 = sum m_j w(r_j / h): (4 pi/3) h^3 rho / m = N.
SPH_HOST_DEVICE inline double neighbourTarget(double mass, const DensityParameters& p) {
  return p.n_neighbours * mass / wendland_c2::kNeighboursPerShape;
}

// ---- density: one neighbour's share of the sums ---------------------------------------------------

// w(q) and q w'(q) at q^2 = r2 * inv_h2 (per unit mass): the terms of S0 and S1.
struct ShapeTerms {
  double w, q_dw;
};
SPH_HOST_DEVICE inline ShapeTerms shapeTerms(double r2, double inv_h2) {
  const double q2 = r2 * inv_h2;
  const double q = std::sqrt(q2);
  const double a = std::max(1.0 - q, 0.0);
  const double a3 = a * a * a;
  return {a3 * a * (1.0 + 4.0 * q), -20.0 * q2 * a3};
}

// f (v_i - v_j) . (x_i - x_j) and f (v_i - v_j) x (x_i - x_j), with f = m_j (1/r) dW/dr: one
// neighbour's share of -rho div v and rho curl v.
struct VelocityTerms {
  double div, curl_x, curl_y, curl_z;
};
SPH_HOST_DEVICE inline VelocityTerms velocityTerms(double f, double dx, double dy, double dz, double dvx, double dvy,
                                                   double dvz) {
  return {f * (dvx * dx + dvy * dy + dvz * dz), f * (dvy * dz - dvz * dy), f * (dvz * dx - dvx * dz),
          f * (dvx * dy - dvy * dx)};
}

// The density pass's result from the sums at the final h (or, when the search radius was too
// small, only h's estimate and the flag; the caller repeats the pass with a larger radius).
SPH_HOST_DEVICE inline DensityResult densityResultOf(double h, bool search_too_small, const DensitySums& s) {
  DensityResult r;
  r.h = h;
  if (search_too_small) {
    r.search_too_small = 1;
    return r;
  }
  const double h3 = h * h * h;
  r.dens = wendland_c2::kNorm * s.s0 / h3;
  r.grad_h = s.s1 < 0.0 ? -3.0 * s.s0 / s.s1 : 1.0;
  r.div_v = -s.div / r.dens;
  r.curl_v = std::sqrt(s.curl_x * s.curl_x + s.curl_y * s.curl_y + s.curl_z * s.curl_z) / r.dens;
  r.n_neighbours = s.n_neighbours;
  return r;
}

// ---- density: the h iteration, one sum evaluation at a time ----------------------------------------

// One particle's search for its support radius: Newton steps on g(h) = S0(h) - target (g rises
// with h), kept inside the bracket [lo, hi] by bisection; hi starts at r_search, which is only
// trusted once g(r_search) >= 0 was seen. advance() takes the shape sums at h and moves h, so the
// sums may come from anywhere: the CPU kernel's loop, a GPU thread's loop over its neighbours
// (template), or one whole GPU pass per step with the host advancing every particle (engine).
struct SupportSearch {
  enum Status : int { kContinue, kConverged, kSearchTooSmall };
  double h, lo, hi, r_search;
  int iterations;
  bool hi_bracketed;

  SPH_HOST_DEVICE static SupportSearch start(double h_guess, double r_search) {
    return {(h_guess > 0.0 && h_guess < r_search) ? h_guess : r_search, 0.0, r_search, r_search, 0, false};
  }

  // s0, s1: the shape sums at h. kConverged: h is the answer (and s0, s1 are its sums);
  // kSearchTooSmall: even h = r_search holds too few neighbours, and h is now an estimate of the
  // support that would; kContinue: evaluate the sums at the new h next.
  SPH_HOST_DEVICE Status advance(double s0, double s1, double target, const DensityParameters& p) {
    if (iterations == p.max_iterations) return kConverged;
    ++iterations;
    const double g = s0 - target;
    if (std::abs(g) <= p.tolerance * target) return kConverged;
    if (g < 0.0) {
      if (h >= r_search) {
        h = r_search * std::cbrt(target / s0);
        return kSearchTooSmall;
      }
      lo = h;
    } else {
      hi = h, hi_bracketed = true;
    }
    const double slope = -s1 / h;
    double next = slope > 0.0 ? h - g / slope : -1.0;
    if (!(next > lo && next < hi)) next = hi_bracketed ? 0.5 * (lo + hi) : r_search;
    h = next;
    return kContinue;
  }
};

// ---- density on the device: particle images and the engine's pairwise sum ----------------------------

// The images below keep their fields in the particle classes' order. A loop of copies that
// reorders them ({pos, mass, vel} from {pos, vel, mass}) is miscompiled by GCC 12.2 with AVX-512
// (-O3 -march=native: mass read from pos.z); copies in order are not affected.

// A j-particle of the density pass (both GPU paths): position, velocity, mass; 64 bytes, four
// 16-byte loads. No default member initialisers: the kernels keep tiles of these in shared memory.
struct alignas(16) DensityJImage {
  double x, y, z, vx, vy, vz, mass, pad;
};
SPH_HOST_DEVICE inline DensityJImage densityJImageOf(const DensityEPJ& p) {
  return {p.pos.x, p.pos.y, p.pos.z, p.vel.x, p.vel.y, p.vel.z, p.mass, 0.0};
}

// An i-particle of the template's density kernel, which iterates h itself: 80 bytes.
struct alignas(16) DensityIImage {
  double x, y, z, vx, vy, vz, mass, h, r_search, pad;
};
inline DensityIImage densityIImageOf(const DensityEPI& p) {
  return {p.pos.x, p.pos.y, p.pos.z, p.vel.x, p.vel.y, p.vel.z, p.mass, p.h, p.r_search, 0.0};
}

// An i-particle at a fixed h, with the powers of h the sums use, computed as the CPU kernel
// computes them (80 bytes): what the engine's sums functor receives, and the template's last pass.
struct alignas(16) DensityIAtH {
  double x, y, z, vx, vy, vz, h2, inv_h, inv_h2, norm5;
};
SPH_HOST_DEVICE inline DensityIAtH densityIAtH(double x, double y, double z, double vx, double vy, double vz,
                                               double h) {
  const double h2 = h * h;
  return {x, y, z, vx, vy, vz, h2, 1.0 / h, 1.0 / (h * h), wendland_c2::kNorm / (h2 * h2 * h)};
}
inline DensityIAtH densityIAtHOf(const DensityEPI& p) {
  return densityIAtH(p.pos.x, p.pos.y, p.pos.z, p.vel.x, p.vel.y, p.vel.z, p.h);
}

// Adds neighbour j's share of every density sum at i's h. Neighbours beyond h (the list is a
// superset) add exact zeros, so no distance test is needed for the sums.
SPH_HOST_DEVICE inline void addDensityNeighbour(const DensityIAtH& i, const DensityJImage& j, DensitySums& s) {
  const double dx = i.x - j.x, dy = i.y - j.y, dz = i.z - j.z;
  const double r2 = dx * dx + dy * dy + dz * dz;
  const ShapeTerms t = shapeTerms(r2, i.inv_h2);
  s.s0 += j.mass * t.w;
  s.s1 += j.mass * t.q_dw;
  const double f = j.mass * i.norm5 * wendland_c2::slopeOverQ(std::sqrt(r2) * i.inv_h);
  const VelocityTerms v = velocityTerms(f, dx, dy, dz, i.vx - j.vx, i.vy - j.vy, i.vz - j.vz);
  s.div += v.div, s.curl_x += v.curl_x, s.curl_y += v.curl_y, s.curl_z += v.curl_z;
  s.n_neighbours += r2 < i.h2;
}

// ---- hydro ------------------------------------------------------------------------------------------

// One particle of a hydro pair with the powers of its h precomputed (the CPU kernel's scratch
// arrays hold the same values); also the device image of HydroEP on both GPU paths (112 bytes).
struct alignas(16) HydroSide {
  double x, y, z, vx, vy, vz, mass, dens, sound, balsara, pres_term, h2, inv_h, norm5;
};
SPH_HOST_DEVICE inline HydroSide hydroSideOf(const HydroEP& p) {
  const double h2 = p.h * p.h, inv_h = 1.0 / p.h;
  return {p.pos.x,  p.pos.y,  p.pos.z,   p.vel.x,     p.vel.y,   p.vel.z, p.mass,
          p.dens,   p.sound,  p.balsara, p.pres_term, h2,        inv_h,   wendland_c2::kNorm * inv_h / (h2 * h2)};
}

// The pair terms of i and j at separation dx = x_i - x_j (r2 = |dx|^2 > 0), dv = v_i - v_j:
//   dv_i/dt -= coef * dx,   du_i/dt += du,   v_signal = the pair's signal velocity
// (hydro_kernel.hpp states the equations).
struct HydroPairTerms {
  double coef, du, v_signal;
};
SPH_HOST_DEVICE inline HydroPairTerms hydroPair(double dx, double dy, double dz, double r2, double dvx, double dvy,
                                                double dvz, const HydroSide& i, const HydroSide& j,
                                                double half_alpha) {
  const double r = std::sqrt(r2);
  const double gi = i.norm5 * wendland_c2::slopeOverQ(r * i.inv_h);
  const double gj = j.norm5 * wendland_c2::slopeOverQ(r * j.inv_h);
  const double vr = dvx * dx + dvy * dy + dvz * dz;
  const double w = std::min(vr, 0.0) / r;
  const double vsig = i.sound + j.sound - 3.0 * w;
  const double visc = -half_alpha * vsig * w * (i.balsara + j.balsara) / (i.dens + j.dens);
  const double g_mean = 0.5 * (gi + gj);
  return {j.mass * (i.pres_term * gi + j.pres_term * gj + visc * g_mean),
          j.mass * (i.pres_term * gi + 0.5 * visc * g_mean) * vr, vsig};
}

// Adds j's share of i's hydro result when they interact: 0 < r < max(h_i, h_j) (the list is a
// superset and holds i itself).
SPH_HOST_DEVICE inline void addHydroNeighbour(const HydroSide& i, const HydroSide& j, double half_alpha,
                                              HydroResult& f) {
  const double dx = i.x - j.x, dy = i.y - j.y, dz = i.z - j.z;
  const double r2 = dx * dx + dy * dy + dz * dz;
  if (!(r2 > 0.0 && r2 < std::max(i.h2, j.h2))) return;
  const HydroPairTerms t = hydroPair(dx, dy, dz, r2, i.vx - j.vx, i.vy - j.vy, i.vz - j.vz, i, j, half_alpha);
  f.acc.x -= t.coef * dx;
  f.acc.y -= t.coef * dy;
  f.acc.z -= t.coef * dz;
  f.du_dt += t.du;
  f.v_signal = std::max(f.v_signal, t.v_signal);
}

}  // namespace sph
