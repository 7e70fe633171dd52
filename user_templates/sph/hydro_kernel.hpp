#pragma once
// The hydro-force pass, run by a symmetry tree (pairs within the larger of the two support
// radii): pressure gradient in the grad-h form (Springel & Hernquist 2002) plus Monaghan's
// (1997) signal-velocity artificial viscosity with the Balsara (1995) switch, as in GADGET-2:
//
//   dv_i/dt = -sum_j m_j [ f_i P_i/rho_i^2 gW_ij(h_i) + f_j P_j/rho_j^2 gW_ij(h_j) + Pi_ij gW_ij ]
//   du_i/dt =  sum_j m_j [ f_i P_i/rho_i^2 gW_ij(h_i) + Pi_ij gW_ij / 2 ] . v_ij
//   Pi_ij = -(alpha/2) v_sig w_ij (B_i + B_j)/2 / rho_ij,   w_ij = min(v_ij . x_ij, 0) / r_ij,
//   v_sig = c_i + c_j - 3 w_ij,  rho_ij = (rho_i + rho_j)/2,  gW_ij = (gW(h_i) + gW(h_j))/2.
//
// The pair term is antisymmetric in i and j, so the total momentum is conserved to rounding.
// Everything is double precision: the kernels' float rounding would show in that sum. The pair
// terms are sph_physics.hpp's hydroPair, which the GPU paths share.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gas_particles.hpp"
#include "sph_physics.hpp"
#include "wendland_c2.hpp"

namespace sph {

namespace detail {

struct HydroScratch {
  std::vector<double> x, y, z, vx, vy, vz, m, dens, sound, balsara, pres_term, h2, inv_h, norm5;
  std::vector<int> inside, near;

  void load(const HydroEP* epj, int n_j) {
    const auto n = static_cast<std::size_t>(n_j);
    for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &m, &dens, &sound, &balsara, &pres_term, &h2, &inv_h, &norm5})
      v->resize(n);
    inside.resize(n);
    near.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      const HydroEP& p = epj[j];
      x[j] = p.pos.x, y[j] = p.pos.y, z[j] = p.pos.z;
      vx[j] = p.vel.x, vy[j] = p.vel.y, vz[j] = p.vel.z;
      m[j] = p.mass, dens[j] = p.dens, sound[j] = p.sound, balsara[j] = p.balsara, pres_term[j] = p.pres_term;
      h2[j] = p.h * p.h, inv_h[j] = 1.0 / p.h;
      norm5[j] = wendland_c2::kNorm * inv_h[j] / (h2[j] * h2[j]);
    }
  }
};

}  // namespace detail

class HydroKernel {
 public:
  explicit HydroKernel(HydroParameters p = {}) : p_(p) {}

  void operator()(const HydroEP* epi, int n_i, const HydroEP* epj, int n_j, HydroResult* out) const {
    thread_local detail::HydroScratch s;
    s.load(epj, n_j);
    for (int i = 0; i < n_i; ++i) out[i] = forceOn(epi[i], n_j, s);
  }

 private:
  HydroResult forceOn(const HydroEP& pi, int n_j, detail::HydroScratch& s) const {
    const int n = pairsOf(pi, n_j, s);
    const HydroSide i = hydroSideOf(pi);
    const double half_alpha = 0.5 * p_.alpha;
    const int* near = s.near.data();
    double ax = 0, ay = 0, az = 0, du = 0, v_signal = 0;
#pragma omp simd reduction(+ : ax, ay, az, du) reduction(max : v_signal)
    for (int k = 0; k < n; ++k) {
      const int j = near[k];
      // Only the fields hydroPair reads of j (position and velocity enter as differences).
      const HydroSide sj{0, 0, 0, 0, 0, 0, s.m[j], s.dens[j], s.sound[j], s.balsara[j], s.pres_term[j], 0,
                         s.inv_h[j], s.norm5[j]};
      const double dx = i.x - s.x[j], dy = i.y - s.y[j], dz = i.z - s.z[j];
      const HydroPairTerms t = hydroPair(dx, dy, dz, dx * dx + dy * dy + dz * dz, i.vx - s.vx[j], i.vy - s.vy[j],
                                         i.vz - s.vz[j], i, sj, half_alpha);
      ax -= t.coef * dx;
      ay -= t.coef * dy;
      az -= t.coef * dz;
      du += t.du;
      v_signal = std::max(v_signal, t.v_signal);
    }
    HydroResult r;
    r.acc = {ax, ay, az};
    r.du_dt = du;
    r.v_signal = v_signal;
    return r;
  }

  // Indices of the EPJs that interact with pi: 0 < r < max(h_i, h_j) (the tree's list is a
  // superset, and holds pi itself).
  static int pairsOf(const HydroEP& pi, int n_j, detail::HydroScratch& s) {
    const double hi2 = pi.h * pi.h;
    const double *x = s.x.data(), *y = s.y.data(), *z = s.z.data(), *h2 = s.h2.data();
    int* __restrict inside = s.inside.data();
#pragma omp simd
    for (int j = 0; j < n_j; ++j) {
      const double dx = x[j] - pi.pos.x, dy = y[j] - pi.pos.y, dz = z[j] - pi.pos.z;
      const double r2 = dx * dx + dy * dy + dz * dz;
      inside[j] = (r2 > 0.0) & (r2 < std::max(hi2, h2[j]));
    }
    int* __restrict near = s.near.data();
    int n = 0;
    for (int j = 0; j < n_j; ++j) {
      near[n] = j;
      n += inside[j];
    }
    return n;
  }

  HydroParameters p_;
};

}  // namespace sph
