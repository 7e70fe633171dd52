#include "grove/fmm/periodic_lattice.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

#include "grove/core/error.hpp"

namespace grove::fmm {
namespace {

// The renormalised lattice sum of one multipole m about c: for each level, the M2L of the ring
// of 9^3 - 3^3 cells of side a around the 3^3 block of them (the target at c), then the
// supercell of 27 copies (side 3a) by M2M.
std::vector<double> latticeSum(const MultiIndexSet& set, std::span<const double> m, double side, int levels, int w) {
  const auto n = static_cast<std::size_t>(set.size());
  std::vector<double> local(n, 0.0), current(m.begin(), m.end()), next(n);
  double a = side;
  for (int level = 0; level < levels; ++level) {
    std::vector<const double*> sources;
    std::vector<Vec3d> separations;
    const int ring = 2 * w * w + 2 * w;  // the next level's block, in this level's cells
    for (int i = -ring; i <= ring; ++i)
      for (int j = -ring; j <= ring; ++j)
        for (int k = -ring; k <= ring; ++k) {
          if (std::abs(i) <= w && std::abs(j) <= w && std::abs(k) <= w) continue;
          sources.push_back(current.data());
          separations.push_back(Vec3d(-i * a, -j * a, -k * a));  // z_target - z_source
        }
    set.multipolesToLocal(sources, separations, local);
    std::fill(next.begin(), next.end(), 0.0);
    for (int i = -w; i <= w; ++i)
      for (int j = -w; j <= w; ++j)
        for (int k = -w; k <= w; ++k) set.shiftMultipole(current, Vec3d(-i * a, -j * a, -k * a), next);
    current.swap(next);
    a *= 2 * w + 1;
  }
  return local;
}

// The lattice sum of a unit multipole at `index`, only its degrees from lowest_degree up (the
// lower ones vanish by the lattice's symmetry or are the conditionally convergent terms).
std::vector<double> unitLatticeSum(const MultiIndexSet& set, int index, int lowest_degree, double side, int levels,
                                   int block) {
  std::vector<double> unit(static_cast<std::size_t>(set.size()), 0.0);
  unit[static_cast<std::size_t>(index)] = 1.0;
  std::vector<double> sum = latticeSum(set, unit, side, levels, block);
  for (std::size_t k = 0; k < sum.size(); ++k)
    if (set.degree(static_cast<int>(k)) < lowest_degree) sum[k] = 0.0;
  return sum;
}

}  // namespace

PeriodicLattice::PeriodicLattice(const MultiIndexSet& set, double side, int levels, int block)
    : set_(set), side_(side), levels_(levels), block_(block) {
  require(block == 1 || block == 2, "PeriodicLattice", "the near block's half-width must be 1 or 2, got {}", block);
  require(side > 0.0 && std::isfinite(side), "PeriodicLattice", "the side must be positive and finite, got {}", side);
  require(levels >= 1, "PeriodicLattice", "levels must be at least 1, got {}", levels);
  require(set.order() >= 4, "PeriodicLattice", "order {} is below 4, the lowest the lattice sum keeps", set.order());
  unit_charge_ = unitLatticeSum(set, set.find(0, 0, 0), 4, side, levels, block);
  unit_dipole_ = {unitLatticeSum(set, set.find(1, 0, 0), 3, side, levels, block),
                  unitLatticeSum(set, set.find(0, 1, 0), 3, side, levels, block),
                  unitLatticeSum(set, set.find(0, 0, 1), 3, side, levels, block)};
  for (int i = -block; i <= block; ++i)
    for (int j = -block; j <= block; ++j)
      for (int k = -block; k <= block; ++k)
        if (i != 0 || j != 0 || k != 0) sigma_ += 1.0 / std::sqrt(double(i * i + j * j + k * k));
}

void PeriodicLattice::setBox(std::span<const double> box_multipole, const Vec3d& centre) {
  const auto n = static_cast<std::size_t>(set_.size());
  require(box_multipole.size() >= n, "PeriodicLattice::setBox", "{} multipole coefficients for order {} (needs {})",
          box_multipole.size(), set_.order(), n);
  centre_ = centre;
  const auto at = [&](int a, int b, int c) { return static_cast<std::size_t>(set_.find(a, b, c)); };
  charge_ = box_multipole[at(0, 0, 0)];
  // M_k = sum_j q_j (c - x_j)^k: the dipole coefficients are -D.
  dipole_ = Vec3d(-box_multipole[at(1, 0, 0)], -box_multipole[at(0, 1, 0)], -box_multipole[at(0, 0, 1)]);
  second_moment_ = box_multipole[at(2, 0, 0)] + box_multipole[at(0, 2, 0)] + box_multipole[at(0, 0, 2)];
  // The part above the dipole, summed as it is; the monopole and dipole from the unit sums.
  std::vector<double> high(box_multipole.begin(), box_multipole.begin() + static_cast<std::ptrdiff_t>(n));
  for (const std::size_t k : {at(0, 0, 0), at(1, 0, 0), at(0, 1, 0), at(0, 0, 1)}) high[k] = 0.0;
  local_ = latticeSum(set_, high, side_, levels_, block_);
  for (std::size_t k = 0; k < n; ++k)
    local_[k] += charge_ * unit_charge_[k] - dipole_.x * unit_dipole_[0][k] - dipole_.y * unit_dipole_[1][k] -
                 dipole_.z * unit_dipole_[2][k];
  constant_ = (kWigner - sigma_) * charge_ / side_;
}

void PeriodicLattice::evaluate(const Vec3d& x, double* phi, Vec3d* gradient) const {
  const Vec3d h = x - centre_;
  set_.evaluateLocal(local_, h, phi, gradient);
  const double volume = side_ * side_ * side_;
  *gradient += (h * charge_ - dipole_) * (4.0 * std::numbers::pi / (3.0 * volume));
  const double quadratic = charge_ * dot(h, h) - 2.0 * dot(dipole_, h) + second_moment_;
  *phi += 2.0 * std::numbers::pi / (3.0 * volume) * quadratic + constant_;
}

}  // namespace grove::fmm
