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
// switch). The per-neighbour terms and the h iteration's steps are sph_physics.hpp's, which the
// GPU paths share.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gas_particles.hpp"
#include "sph_physics.hpp"
#include "wendland_c2.hpp"

namespace sph {

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
// d(S0)/dh = -S1 / h. Written into sums.s0, sums.s1.
inline void computeShapeSums(const double* r2, const double* m, int n, double h, DensitySums& sums) {
  const double inv_h2 = 1.0 / (h * h);
  double s0 = 0, s1 = 0;
#pragma omp simd reduction(+ : s0, s1)
  for (int k = 0; k < n; ++k) {
    const ShapeTerms t = shapeTerms(r2[k], inv_h2);
    s0 += m[k] * t.w;
    s1 += m[k] * t.q_dw;
  }
  sums.s0 = s0, sums.s1 = s1;
}

struct SupportSolution {
  double h = 0;
  DensitySums sums;  // s0, s1 at h
  bool search_too_small = false;
};

inline SupportSolution solveSupportRadius(const double* r2, const double* m, int n, double h_guess, double r_search,
                                          double target, const DensityParameters& p) {
  SupportSearch search = SupportSearch::start(h_guess, r_search);
  SupportSolution sol;
  for (;;) {
    computeShapeSums(r2, m, n, search.h, sol.sums);
    const auto status = search.advance(sol.sums.s0, sol.sums.s1, target, p);
    if (status == SupportSearch::kContinue) continue;
    sol.h = search.h;
    sol.search_too_small = status == SupportSearch::kSearchTooSmall;
    return sol;
  }
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
    auto sol = detail::solveSupportRadius(s.near_r2.data(), s.near_m.data(), n, pi.h, pi.r_search,
                                          neighbourTarget(pi.mass, p_), p_);
    if (!sol.search_too_small) addVelocityDerivatives(pi, n, sol.h, s, sol.sums);
    return densityResultOf(sol.h, sol.search_too_small, sol.sums);
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
                                     DensitySums& sums) {
    const DensityIAtH i = densityIAtH(pi.pos.x, pi.pos.y, pi.pos.z, pi.vel.x, pi.vel.y, pi.vel.z, h);
    const int* near = s.near.data();
    double div = 0, cx = 0, cy = 0, cz = 0;
    int count = 0;
#pragma omp simd reduction(+ : div, cx, cy, cz, count)
    for (int k = 0; k < n; ++k) {
      const int j = near[k];
      const double f = s.m[j] * i.norm5 * wendland_c2::slopeOverQ(std::sqrt(s.near_r2[k]) * i.inv_h);
      const VelocityTerms v =
          velocityTerms(f, i.x - s.x[j], i.y - s.y[j], i.z - s.z[j], i.vx - s.vx[j], i.vy - s.vy[j], i.vz - s.vz[j]);
      div += v.div;
      cx += v.curl_x;
      cy += v.curl_y;
      cz += v.curl_z;
      count += s.near_r2[k] < i.h2;
    }
    sums.div = div, sums.curl_x = cx, sums.curl_y = cy, sums.curl_z = cz;
    sums.n_neighbours = count;
  }

  DensityParameters p_;
};

// The GPU engine path's density pass on the CPU: every particle's DensitySums at its current h,
// neighbour by neighbour in list order with the engine functor's own function. The sample does
// not use it; the tests run the engine path's host iteration (sph_solver.hpp,
// computeDensityBySums) on it without a GPU.
struct DensitySumsKernel {
  void operator()(const DensityEPI* epi, int n_i, const DensityEPJ* epj, int n_j, DensitySums* out) const {
    thread_local std::vector<DensityJImage> j_images;
    j_images.resize(static_cast<std::size_t>(n_j));
    for (int j = 0; j < n_j; ++j) j_images[j] = densityJImageOf(epj[j]);
    for (int i = 0; i < n_i; ++i) {
      const DensityIAtH pi = densityIAtHOf(epi[i]);
      DensitySums s;
      for (int j = 0; j < n_j; ++j) addDensityNeighbour(pi, j_images[j], s);
      out[i] = s;
    }
  }
};

}  // namespace sph
