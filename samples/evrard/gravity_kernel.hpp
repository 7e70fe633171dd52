#pragma once
// Softened Newtonian gravity, G = 1, for grove's long-range tree (FDPS kernel form: called once
// per group, adds the n_j sources' force on each of the n_i targets).
//
// Two softening laws, both with potential -m/eps at r = 0 so that eps means the same depth:
//   Plummer   phi = -m / sqrt(r^2 + eps^2)
//   spline    the potential of the cubic-spline (M4) density of support h_s = 2.8 eps, as in
//             GADGET-2 (Springel 2005, eq. 4 and forcetree.c): exactly Newtonian for r >= h_s, so
//             the softening bias is local (doc/evrard.md, "start check").
// The ep-sp kernels give cells the same softened monopole; the quadrupole kernel adds the
// unsoftened quadrupole term (cells that pass the opening criterion are far compared with h_s).
// Each target's own term (r = 0) adds nothing to the acceleration and selfPotential() to the
// potential; the caller removes the latter (removeSelfPotential).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "evrard_particles.hpp"

namespace evrard {

enum class SofteningLaw { kPlummer, kSpline };

struct Softening {
  SofteningLaw law = SofteningLaw::kSpline;
  double eps = 0.01;  // Plummer-equivalent length: phi(0) = -m / eps for both laws

  double splineSupport() const { return 2.8 * eps; }
  // The potential per unit source mass at r = 0 (what the kernel adds for i == j).
  double selfPotential() const { return -1.0 / eps; }
  std::string name() const { return law == SofteningLaw::kPlummer ? "plummer" : "spline"; }
};

// Per unit source mass at separation r (r2 = r^2): the potential phi and the factor f with
// acceleration = f * (x_j - x_i). Branch-free selects, so that the loops below vectorise.
struct PlummerPair {
  double eps2;
  void operator()(double r2, double& f, double& phi) const {
    const double inv_r = 1.0 / std::sqrt(r2 + eps2);
    phi = -inv_r;
    f = inv_r * inv_r * inv_r;
  }
};

struct SplinePair {
  double h, inv_h;  // support radius h_s
  void operator()(double r2, double& f, double& phi) const {
    const double r = std::sqrt(r2);
    const double u = r * inv_h;
    const double inv_h3 = inv_h * inv_h * inv_h;
    // Newtonian beyond the support; r_safe and u_safe keep the branches not selected finite.
    const double r_safe = std::max(r, 0.5 * h);
    const double inv_r = 1.0 / r_safe;
    const double f_far = inv_r * inv_r * inv_r, phi_far = -inv_r;
    const double u2 = u * u;
    const double f_in = inv_h3 * (10.666666666667 + u2 * (32.0 * u - 38.4));
    const double phi_in = inv_h * (-2.8 + u2 * (5.333333333333 + u2 * (6.4 * u - 9.6)));
    const double u_safe = std::max(u, 0.5);
    const double f_mid = inv_h3 * (21.333333333333 - 48.0 * u_safe + 38.4 * u_safe * u_safe -
                                   10.666666666667 * u_safe * u_safe * u_safe - 0.066666666667 / (u_safe * u_safe * u_safe));
    const double phi_mid = inv_h * (-3.2 + 0.066666666667 / u_safe +
                                    u_safe * u_safe * (10.666666666667 + u_safe * (-16.0 + u_safe * (9.6 - 2.133333333333 * u_safe))));
    f = u >= 1.0 ? f_far : (u < 0.5 ? f_in : f_mid);
    phi = u >= 1.0 ? phi_far : (u < 0.5 ? phi_in : phi_mid);
  }
};

namespace detail {
// The group's sources as arrays, one set per thread, kept between calls.
struct Sources {
  std::vector<double> x, y, z, m, qxx, qyy, qzz, qxy, qxz, qyz;
  void resize(std::size_t n, bool quadrupole) {
    for (auto* v : {&x, &y, &z, &m}) v->resize(n);
    if (quadrupole)
      for (auto* v : {&qxx, &qyy, &qzz, &qxy, &qxz, &qyz}) v->resize(n);
  }
};
inline Sources& sources() {
  thread_local Sources s;
  return s;
}

template <class Pair>
void addMonopoles(const GravityEPI* epi, int n_i, const Sources& s, int n_j, const Pair& pair, GravityResult* out) {
  const double *x = s.x.data(), *y = s.y.data(), *z = s.z.data(), *m = s.m.data();
  for (int i = 0; i < n_i; ++i) {
    const double xi = epi[i].pos.x, yi = epi[i].pos.y, zi = epi[i].pos.z;
    double ax = 0, ay = 0, az = 0, pot = 0;
#pragma omp simd reduction(+ : ax, ay, az, pot)
    for (int j = 0; j < n_j; ++j) {
      const double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
      double f, phi;
      pair(dx * dx + dy * dy + dz * dz, f, phi);
      ax += m[j] * f * dx, ay += m[j] * f * dy, az += m[j] * f * dz;
      pot += m[j] * phi;
    }
    out[i].acc.x += ax, out[i].acc.y += ay, out[i].acc.z += az;
    out[i].pot += pot;
  }
}

// The quadrupole correction of cells (raw second moment Q about the centre of mass, as
// grove::SPJQuadrupole holds it): phi_Q = -(3 r.Q.r / r^2 - tr Q) / (2 r^3), a = -grad phi_Q.
inline void addQuadrupoles(const GravityEPI* epi, int n_i, const Sources& s, int n_j, GravityResult* out) {
  const double *x = s.x.data(), *y = s.y.data(), *z = s.z.data();
  const double *qxx = s.qxx.data(), *qyy = s.qyy.data(), *qzz = s.qzz.data();
  const double *qxy = s.qxy.data(), *qxz = s.qxz.data(), *qyz = s.qyz.data();
  for (int i = 0; i < n_i; ++i) {
    const double xi = epi[i].pos.x, yi = epi[i].pos.y, zi = epi[i].pos.z;
    double ax = 0, ay = 0, az = 0, pot = 0;
#pragma omp simd reduction(+ : ax, ay, az, pot)
    for (int j = 0; j < n_j; ++j) {
      const double dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];  // from the source to the target
      const double r2 = dx * dx + dy * dy + dz * dz;
      const double inv_r = 1.0 / std::sqrt(r2);
      const double inv_r2 = inv_r * inv_r, inv_r5 = inv_r2 * inv_r2 * inv_r;
      const double tr = qxx[j] + qyy[j] + qzz[j];
      const double qrx = qxx[j] * dx + qxy[j] * dy + qxz[j] * dz;
      const double qry = qxy[j] * dx + qyy[j] * dy + qyz[j] * dz;
      const double qrz = qxz[j] * dx + qyz[j] * dy + qzz[j] * dz;
      const double rqr_r5 = (qrx * dx + qry * dy + qrz * dz) * inv_r5;
      pot += -1.5 * rqr_r5 + 0.5 * tr * inv_r2 * inv_r;
      const double radial = -7.5 * rqr_r5 * inv_r2 + 1.5 * tr * inv_r5;
      ax += radial * dx + 3.0 * qrx * inv_r5;
      ay += radial * dy + 3.0 * qry * inv_r5;
      az += radial * dz + 3.0 * qrz * inv_r5;
    }
    out[i].acc.x += ax, out[i].acc.y += ay, out[i].acc.z += az;
    out[i].pot += pot;
  }
}

template <class Source>
void loadMonopoles(const Source* src, int n_j, Sources& s, bool quadrupole) {
  s.resize(static_cast<std::size_t>(n_j), quadrupole);
  for (int j = 0; j < n_j; ++j) {
    const Vec3d p = src[j].getPos();
    s.x[j] = p.x, s.y[j] = p.y, s.z[j] = p.z;
    s.m[j] = src[j].getCharge();
  }
}
}  // namespace detail

// The ep-ep kernel, and the ep-sp kernel for monopole cells (any source with getPos, getCharge).
class GravityKernel {
 public:
  explicit GravityKernel(Softening s) : softening_(s) {}

  template <class Source>
  void operator()(const GravityEPI* epi, int n_i, const Source* src, int n_j, GravityResult* out) const {
    auto& s = detail::sources();
    detail::loadMonopoles(src, n_j, s, false);
    addMonopoles(epi, n_i, s, n_j, out);
  }

 protected:
  void addMonopoles(const GravityEPI* epi, int n_i, const detail::Sources& s, int n_j, GravityResult* out) const {
    if (softening_.law == SofteningLaw::kPlummer)
      detail::addMonopoles(epi, n_i, s, n_j, PlummerPair{softening_.eps * softening_.eps}, out);
    else
      detail::addMonopoles(epi, n_i, s, n_j, SplinePair{softening_.splineSupport(), 1.0 / softening_.splineSupport()},
                           out);
  }

  Softening softening_;
};

// The ep-sp kernel for quadrupole cells (grove::SPJQuadrupole).
class GravityQuadrupoleKernel : public GravityKernel {
 public:
  using GravityKernel::GravityKernel;

  template <class SPJ>
  void operator()(const GravityEPI* epi, int n_i, const SPJ* sp, int n_j, GravityResult* out) const {
    auto& s = detail::sources();
    detail::loadMonopoles(sp, n_j, s, true);
    for (int j = 0; j < n_j; ++j) {
      s.qxx[j] = sp[j].quad.xx, s.qyy[j] = sp[j].quad.yy, s.qzz[j] = sp[j].quad.zz;
      s.qxy[j] = sp[j].quad.xy, s.qxz[j] = sp[j].quad.xz, s.qyz[j] = sp[j].quad.yz;
    }
    addMonopoles(epi, n_i, s, n_j, out);
    detail::addQuadrupoles(epi, n_i, s, n_j, out);
  }
};

}  // namespace evrard
