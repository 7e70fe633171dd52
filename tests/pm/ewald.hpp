#pragma once
// Ewald summation of periodic 1/r^2 gravity (G = 1) in the unit-free cube [0, L)^3 with a uniform
// neutralising background (the k = 0 term left out), the reference the PM tests compare with.
// alpha = 5.6 / L: real-space terms over the 27 nearest images (the next are >= 1.5 L away,
// erfc < 1e-30), Fourier terms |n_i| <= 10 (exp(-k^2 / 4 alpha^2) < 1e-18): ~1e-12 relative.
#include <cmath>
#include <complex>
#include <numbers>
#include <span>
#include <vector>

#include "grove/core/vec3.hpp"

namespace grove::testing_support {

struct EwaldSource {
  Vec3d pos;
  double mass;
};

class Ewald {
 public:
  Ewald(std::span<const EwaldSource> sources, double side) : sources_(sources.begin(), sources.end()), side_(side) {
    alpha_ = 5.6 / side;
    const double k_unit = 2.0 * std::numbers::pi / side;
    for (int nx = -kMax; nx <= kMax; ++nx)
      for (int ny = -kMax; ny <= kMax; ++ny)
        for (int nz = 0; nz <= kMax; ++nz) {  // half space: k and -k give conjugate terms
          if (nz == 0 && (ny < 0 || (ny == 0 && nx <= 0))) continue;
          const Vec3d k(k_unit * nx, k_unit * ny, k_unit * nz);
          const double k2 = dot(k, k);
          Mode m{k, 2.0 * 4.0 * std::numbers::pi / (side * side * side) * std::exp(-k2 / (4.0 * alpha_ * alpha_)) / k2, {}};
          for (const auto& s : sources_) m.structure += s.mass * std::polar(1.0, -dot(k, s.pos));
          modes_.push_back(m);
        }
  }

  // Acceleration at x (towards the masses), and the potential (zero mean over the box).
  // A source exactly at x is left out (its own field is zero by symmetry).
  Vec3d acceleration(const Vec3d& x) const {
    Vec3d field{0.0, 0.0, 0.0};  // Coulomb's sign: away from the sources
    for (const auto& s : sources_) {
      const Vec3d d0 = nearestImage(x - s.pos);
      for (int ix = -1; ix <= 1; ++ix)
        for (int iy = -1; iy <= 1; ++iy)
          for (int iz = -1; iz <= 1; ++iz) {
            const Vec3d d = d0 + Vec3d(ix, iy, iz) * side_;
            const double r = std::sqrt(dot(d, d));
            if (r == 0.0) continue;
            const double radial = std::erfc(alpha_ * r) / (r * r) +
                                  2.0 * alpha_ / std::sqrt(std::numbers::pi) * std::exp(-alpha_ * alpha_ * r * r) / r;
            field += d * (s.mass * radial / r);
          }
    }
    for (const auto& m : modes_) {
      // sum_j m_j sin(k.(x - x_j)) = Im(e^{ik.x} S(k)), S(k) = sum_j m_j e^{-ik.x_j}
      const double im = std::imag(std::polar(1.0, dot(m.k, x)) * m.structure);
      field += m.k * (m.weight * im);
    }
    return -field;
  }

  double potential(const Vec3d& x) const {
    double phi = 0.0;  // Coulomb's sign
    for (const auto& s : sources_) {
      const Vec3d d0 = nearestImage(x - s.pos);
      for (int ix = -1; ix <= 1; ++ix)
        for (int iy = -1; iy <= 1; ++iy)
          for (int iz = -1; iz <= 1; ++iz) {
            const Vec3d d = d0 + Vec3d(ix, iy, iz) * side_;
            const double r = std::sqrt(dot(d, d));
            phi += r == 0.0 ? -2.0 * alpha_ / std::sqrt(std::numbers::pi) * s.mass : s.mass * std::erfc(alpha_ * r) / r;
          }
      phi -= std::numbers::pi / (alpha_ * alpha_ * side_ * side_ * side_) * s.mass;
    }
    for (const auto& m : modes_) phi += m.weight * std::real(std::polar(1.0, dot(m.k, x)) * m.structure);
    return -phi;
  }

  Vec3d nearestImage(Vec3d d) const {
    for (int a = 0; a < 3; ++a) d[a] -= side_ * std::round(d[a] / side_);
    return d;
  }

 private:
  static constexpr int kMax = 10;
  struct Mode {
    Vec3d k;
    double weight;
    std::complex<double> structure;
  };
  static double dot(const Vec3d& a, const Vec3d& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

  std::vector<EwaldSource> sources_;
  double side_;
  double alpha_;
  std::vector<Mode> modes_;
};

}  // namespace grove::testing_support
