#pragma once
// The Evrard (1988) sphere: G = M = R = 1, rho(r) = 1 / (2 pi r) for r < 1 (so the mass inside r
// is r^2), u = 0.05, at rest.
//
// Positions: a cubic lattice (offset by a seeded random shift, so runs with different seeds
// sample differently and no point sits on the centre by construction) cut to the N points
// closest to the centre, then stretched radially: the k-th point by distance (k = 0 .. N-1) is
// moved along its direction to r_k = sqrt((k + 1/2) / N), the radius whose enclosed mass is
// (k + 1/2) / N. A uniform lattice has k/N ~ s^3 at radius s, so this is r ~ s^(3/2), the usual
// stretched lattice of rho ~ 1/r, and the enclosed-mass profile is exact to 1/(2N). Particles
// have equal masses 1/N. Every rank builds the same lattice (cheap: O(N log N)) and keeps its
// share [N r/P, N (r+1)/P) of the sorted points, so the system does not depend on the rank count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/core/vec3.hpp"

namespace evrard {

struct EvrardSphere {
  static constexpr double kGamma = 5.0 / 3.0;
  static constexpr double kInternalEnergy = 0.05;  // u = 0.05 G M / R
  // W = -(2/3) G M^2 / R: with M(r) = r^2, W = -int_0^1 M(r) dM / r = -int_0^1 2 r^2 dr.
  static constexpr double kPotentialEnergy = -2.0 / 3.0;
  static constexpr double kThermalEnergy = kInternalEnergy;  // M u

  static double density(double r) { return 1.0 / (2.0 * std::numbers::pi * r); }
};

struct LatticePoint {
  grove::Vec3d pos;  // on the stretched lattice
  std::int64_t id;
};

// Every point of the stretched lattice, sorted by radius (ids are the ranks by radius).
inline std::vector<LatticePoint> stretchedLattice(std::int64_t n, std::uint64_t seed) {
  grove::require(n >= 1, "evrard::stretchedLattice", "the particle number must be positive, got {}", n);
  // Spacing of a lattice with N points per unit-sphere volume; the cube's half-width covers the
  // sphere with a margin, so at least N points lie within it.
  const double spacing = std::cbrt(4.0 * std::numbers::pi / 3.0 / static_cast<double>(n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> shift(-0.5 * spacing, 0.5 * spacing);
  const grove::Vec3d offset{shift(rng), shift(rng), shift(rng)};
  const auto half = static_cast<std::int64_t>(std::ceil(1.2 / spacing)) + 1;
  struct Candidate {
    double r2;
    grove::Vec3d pos;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(static_cast<std::size_t>(1.8 * static_cast<double>(n)) + 64);  // 1.2^3 n points
  for (std::int64_t i = -half; i <= half; ++i)
    for (std::int64_t j = -half; j <= half; ++j)
      for (std::int64_t k = -half; k <= half; ++k) {
        const grove::Vec3d p = grove::Vec3d{static_cast<double>(i), static_cast<double>(j), static_cast<double>(k)} *
                                   spacing + offset;
        const double r2 = grove::norm2(p);
        if (r2 < 1.44) candidates.push_back({r2, p});
      }
  grove::require(static_cast<std::int64_t>(candidates.size()) >= n, "evrard::stretchedLattice",
                 "the lattice of spacing {} holds only {} points within 1.2, fewer than N = {}", spacing,
                 candidates.size(), n);
  // Ties in radius would make the order depend on the sort; break them by position.
  const auto closer = [](const Candidate& a, const Candidate& b) {
    if (a.r2 != b.r2) return a.r2 < b.r2;
    if (a.pos.x != b.pos.x) return a.pos.x < b.pos.x;
    if (a.pos.y != b.pos.y) return a.pos.y < b.pos.y;
    return a.pos.z < b.pos.z;
  };
  std::partial_sort(candidates.begin(), candidates.begin() + n, candidates.end(), closer);
  std::vector<LatticePoint> points(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    const Candidate& c = candidates[static_cast<std::size_t>(k)];
    const double r = std::sqrt((static_cast<double>(k) + 0.5) / static_cast<double>(n));
    const double s = std::sqrt(c.r2);
    points[static_cast<std::size_t>(k)] = {s > 0.0 ? (r / s) * c.pos : grove::Vec3d{r, 0.0, 0.0}, k};
  }
  return points;
}

}  // namespace evrard
