#pragma once
// The density pass, run by a gather tree: for each particle the support radius h that holds the
// target neighbour number N (Springel & Hernquist 2002):
//
//   (4 pi / 3) h^3 rho(h) / m = N,   rho(h) = sum_j m_j W(|x_i - x_j|, h),
//
// solved by safeguarded Newton iteration inside the kernel, over the EPJs within the particle's
// search radius r_search >= h (the tree's list is a superset; the kernel filters it). When even
// h = r_search holds too few neighbours the particle is flagged (search_too_small) with an
// estimate of the h it needs, and the caller repeats the pass with a larger r_search.
// With h found, the kernel also gives the grad-h factor and div v, |curl v| (for the Balsara
// switch).
#include <algorithm>
#include <cmath>
#include <vector>

#include "gas_particles.hpp"
#include "wendland_c2.hpp"

namespace sph {

struct DensityParameters {
  double n_neighbours = 200;  // target (4 pi / 3) h^3 rho / m
  double tolerance = 1e-9;    // relative, on the neighbour number
  int max_iterations = 100;   // Newton steps fall back to bisection, so 100 is never reached in practice
};

namespace detail {

// The group's EPJs as arrays (so the distance loops vectorise) and per-particle work lists.
// One per thread, kept between calls: the kernel allocates nothing in steady state.
struct DensityScratch {
  std::vector<double> x, y, z, vx, vy, vz, m;
  std::vector<double> r2;
  std::vector<int> near;  // EPJ indices within r_search of the current particle
  std::vector<double> near_r2, near_m;

  void load(const DensityEPJ* epj, int n_j) {
    const auto n = static_cast<std::size_t>(n_j);
    for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &m, &r2, &near_r2, &near_m}) v->resize(n);
    near.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      x[j] = epj[j].pos.x, y[j] = epj[j].pos.y, z[j] = epj[j].pos.z;
      vx[j] = epj[j].vel.x, vy[j] = epj[j].vel.y, vz[j] = epj[j].vel.z;
      m[j] = epj[j].mass;
    }
  }
};

// S0 = sum m w(q) and S1 = sum m q w'(q) at support h: (4 pi/3) h^3 rho = 14 S0 and
// d(S0)/dh = -S1 / h.
struct ShapeSums {
  double s0 = 0, s1 = 0;
};

inline ShapeSums shapeSums(const double* r2, const double* m, int n, double h) {
  const double inv_h2 = 1.0 / (h * h);
  double s0 = 0, s1 = 0;
#pragma omp simd reduction(+ : s0, s1)
  for (int k = 0; k < n; ++k) {
    const double q2 = r2[k] * inv_h2;
    const double q = std::sqrt(q2);
    const double a = std::max(1.0 - q, 0.0);
    const double a3 = a * a * a;
    s0 += m[k] * (a3 * a * (1.0 + 4.0 * q));
    s1 += m[k] * (-20.0 * q2 * a3);
  }
  return {s0, s1};
}

struct SupportSolution {
  double h = 0;
  ShapeSums sums;
  bool search_too_small = false;
};

// Newton on g(h) = S0(h) - target (g rises with h), kept inside the bracket [lo, hi] by
// bisection; hi starts at r_search, which is only trusted once g(r_search) >= 0 was seen.
inline SupportSolution solveSupportRadius(const double* r2, const double* m, int n, double h_guess, double r_search,
                                          double target, const DensityParameters& p) {
  double lo = 0.0, hi = r_search;
  bool hi_bracketed = false;
  double h = (h_guess > 0.0 && h_guess < r_search) ? h_guess : r_search;
  ShapeSums sums;
  for (int iteration = 0; iteration < p.max_iterations; ++iteration) {
    sums = shapeSums(r2, m, n, h);
    const double g = sums.s0 - target;
    if (std::abs(g) <= p.tolerance * target) return {h, sums, false};
    if (g < 0.0) {
      if (h >= r_search) return {r_search * std::cbrt(target / sums.s0), sums, true};
      lo = h;
    } else {
      hi = h, hi_bracketed = true;
    }
    const double slope = -sums.s1 / h;
    double next = slope > 0.0 ? h - g / slope : -1.0;
    if (!(next > lo && next < hi)) next = hi_bracketed ? 0.5 * (lo + hi) : r_search;
    h = next;
  }
  return {h, shapeSums(r2, m, n, h), false};
}

}  // namespace detail

class DensityKernel {
 public:
  explicit DensityKernel(DensityParameters p = {}) : p_(p) {}

  void operator()(const DensityEPI* epi, int n_i, const DensityEPJ* epj, int n_j, DensityResult* out) const {
    thread_local detail::DensityScratch s;
    s.load(epj, n_j);
    for (int i = 0; i < n_i; ++i) out[i] = densityOf(epi[i], n_j, s);
  }

 private:
  DensityResult densityOf(const DensityEPI& pi, int n_j, detail::DensityScratch& s) const {
    const int n = gatherWithin(pi.pos, pi.r_search, n_j, s);
    const double target = p_.n_neighbours * pi.mass / wendland_c2::kNeighboursPerShape;
    const auto sol = detail::solveSupportRadius(s.near_r2.data(), s.near_m.data(), n, pi.h, pi.r_search, target, p_);
    DensityResult r;
    r.h = sol.h;
    r.search_too_small = sol.search_too_small;
    if (sol.search_too_small) return r;
    const double h3 = sol.h * sol.h * sol.h;
    r.dens = wendland_c2::kNorm * sol.sums.s0 / h3;
    r.grad_h = sol.sums.s1 < 0.0 ? -3.0 * sol.sums.s0 / sol.sums.s1 : 1.0;
    addVelocityDerivatives(pi, n, sol.h, s, r);
    return r;
  }

  // Fills s.near* with the EPJs closer than r: the tree's list is a superset.
  static int gatherWithin(const Vec3d& xi, double r, int n_j, detail::DensityScratch& s) {
    const double r2_max = r * r;
    double* __restrict r2 = s.r2.data();
    const double *x = s.x.data(), *y = s.y.data(), *z = s.z.data();
#pragma omp simd
    for (int j = 0; j < n_j; ++j) {
      const double dx = x[j] - xi.x, dy = y[j] - xi.y, dz = z[j] - xi.z;
      r2[j] = dx * dx + dy * dy + dz * dz;
    }
    int* __restrict near = s.near.data();
    int n = 0;
    for (int j = 0; j < n_j; ++j) {
      near[n] = j;
      n += r2[j] < r2_max;
    }
    for (int k = 0; k < n; ++k) {
      s.near_r2[k] = r2[near[k]];
      s.near_m[k] = s.m[near[k]];
    }
    return n;
  }

  // rho div v = -sum m_j v_ij . grad_i W_ij,  rho curl v = sum m_j v_ij x grad_i W_ij.
  static void addVelocityDerivatives(const DensityEPI& pi, int n, double h, const detail::DensityScratch& s,
                                     DensityResult& r) {
    const double h2 = h * h, inv_h = 1.0 / h, norm5 = wendland_c2::kNorm / (h2 * h2 * h);
    const int* near = s.near.data();
    double div = 0, cx = 0, cy = 0, cz = 0;
    int count = 0;
#pragma omp simd reduction(+ : div, cx, cy, cz, count)
    for (int k = 0; k < n; ++k) {
      const int j = near[k];
      const double q = std::sqrt(s.near_r2[k]) * inv_h;
      const double a = std::max(1.0 - q, 0.0);
      const double f = s.m[j] * norm5 * (-20.0 * a * a * a);
      const double dx = pi.pos.x - s.x[j], dy = pi.pos.y - s.y[j], dz = pi.pos.z - s.z[j];
      const double dvx = pi.vel.x - s.vx[j], dvy = pi.vel.y - s.vy[j], dvz = pi.vel.z - s.vz[j];
      div += f * (dvx * dx + dvy * dy + dvz * dz);
      cx += f * (dvy * dz - dvz * dy);
      cy += f * (dvz * dx - dvx * dz);
      cz += f * (dvx * dy - dvy * dx);
      count += s.near_r2[k] < h2;
    }
    r.div_v = -div / r.dens;
    r.curl_v = std::sqrt(cx * cx + cy * cy + cz * cz) / r.dens;
    r.n_neighbours = count;
  }

  DensityParameters p_;
};

}  // namespace sph
