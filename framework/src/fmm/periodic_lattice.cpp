#include "grove/fmm/periodic_lattice.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "grove/core/error.hpp"

namespace grove::fmm {
namespace {

// The Taylor coefficients of 1/r summed over one level's ring of cells, for cells of side 1:
// sum over the (4w(w+1) + 1)^3 - (2w + 1)^3 cells n of the ring of T_m(u - n), r = z_target -
// z_source with the source cells at n and the target at u. The ring is the next level's block,
// in this level's cells, less this level's block. For cells of side a, T_m(a r) = a^-(|m| + 1)
// T_m(r), so one sum serves every level. M2L is linear in T: the ring's M2L of one multipole is
// one contraction with this sum instead of one M2L per cell.
std::vector<double> ringTaylorSum(const MultiIndexSet& set, int w, const Vec3d& u) {
  const auto n = static_cast<std::size_t>(set.size());
  std::vector<double> sum(n, 0.0), t(n);
  const int ring = 2 * w * w + 2 * w;
  for (int i = -ring; i <= ring; ++i)
    for (int j = -ring; j <= ring; ++j)
      for (int k = -ring; k <= ring; ++k) {
        if (std::abs(i) <= w && std::abs(j) <= w && std::abs(k) <= w) continue;
        set.taylorCoefficients(u - Vec3d(i, j, k), set.order(), t);
        for (std::size_t m = 0; m < n; ++m) sum[m] += t[m];
      }
  return sum;
}

// T_m(a r) = a^-(|m| + 1) T_m(r): a sum for cells of side 1 scaled to cells of side a.
std::vector<double> scaled(const MultiIndexSet& set, std::span<const double> taylor, double a) {
  std::vector<double> out(taylor.begin(), taylor.end());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] *= std::pow(a, -(set.degree(static_cast<int>(k)) + 1));
  return out;
}

// local += the M2L of `multipole` through the summed Taylor coefficients `taylor` (the full
// contraction n! L_n = sum_k D_{n+k} M_k / k!, D_m = m! T_m, |n| + |k| <= p: the lattice's summed
// coefficients need not be harmonic, so the harmonic form does not apply).
void contractIntoLocal(const MultiIndexSet& set, std::span<const double> taylor, std::span<const double> multipole,
                       std::span<double> local) {
  const auto begin = set.contractionBegin();
  const auto pairs = set.contraction();
  const auto factorial = set.factorials(), inverse_factorial = set.inverseFactorials();
  for (std::size_t n = 0; n < local.size(); ++n) {
    double total = 0.0;
    for (auto t = static_cast<std::size_t>(begin[n]); t < static_cast<std::size_t>(begin[n + 1]); ++t) {
      const std::size_t k = pairs[t][0], m = pairs[t][1];
      total += factorial[m] * taylor[m] * multipole[k] * inverse_factorial[k];
    }
    local[n] += inverse_factorial[n] * total;
  }
}

// The supercell of (2w + 1)^3 copies of a cell of side a, one M2M per axis in turn: a row of
// 2w + 1 along x, a layer of 2w + 1 rows, a block of 2w + 1 layers (the shifts compose exactly).
std::vector<double> supercell(const MultiIndexSet& set, const std::vector<double>& cell, double a, int w) {
  std::vector<double> from = cell, to(cell.size());
  for (int axis = 0; axis < 3; ++axis) {
    std::fill(to.begin(), to.end(), 0.0);
    for (int i = -w; i <= w; ++i) {
      Vec3d s(0.0, 0.0, 0.0);
      s[static_cast<std::size_t>(axis)] = -i * a;  // z_parent - z_copy
      set.shiftMultipole(from, s, to);
    }
    from.swap(to);
  }
  return from;
}

// The renormalised lattice sum of one multipole m about c: for each level, the ring's M2L into
// the local expansion at c, then the supercell of (2w + 1)^3 copies by M2M.
std::vector<double> latticeSum(const MultiIndexSet& set, std::span<const double> ring_taylor, std::span<const double> m,
                               double side, int levels, int w) {
  const auto n = static_cast<std::size_t>(set.size());
  std::vector<double> local(n, 0.0), current(m.begin(), m.end());
  double a = side;
  for (int level = 0; level < levels; ++level) {
    contractIntoLocal(set, scaled(set, ring_taylor, a), current, local);
    current = supercell(set, current, a, w);
    a *= 2 * w + 1;
  }
  return local;
}

// The lattice sum of a unit multipole at `index`, only its degrees from lowest_degree up (the
// lower ones vanish by the lattice's symmetry or are the conditionally convergent terms).
std::vector<double> unitLatticeSum(const MultiIndexSet& set, std::span<const double> ring_taylor, int index,
                                   int lowest_degree, double side, int levels, int block) {
  std::vector<double> unit(static_cast<std::size_t>(set.size()), 0.0);
  unit[static_cast<std::size_t>(index)] = 1.0;
  std::vector<double> sum = latticeSum(set, ring_taylor, unit, side, levels, block);
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
  ring_taylor_ = ringTaylorSum(set, block, Vec3d(0.0, 0.0, 0.0));
  // The first ring's sums at each part's centre u (in units of the side), from the parts with
  // every u_a > 0: reflecting axis a maps the ring onto itself and T_m onto (-1)^(m_a) T_m.
  const double part = 1.0 / kParts;
  std::vector<std::vector<double>> positive(kParts * kParts * kParts);
  part_taylor_.resize(positive.size());
  for (int p = 0; p < kParts * kParts * kParts; ++p) {
    const std::array<int, 3> index = partAxes(p);
    Vec3d u, mirrored;
    for (std::size_t a = 0; a < 3; ++a) {
      u[a] = (index[a] + 0.5) * part - 0.5;
      mirrored[a] = std::abs(u[a]);
    }
    const int key = LatticeField::partAt(mirrored + Vec3d(0.5, 0.5, 0.5));
    if (positive[static_cast<std::size_t>(key)].empty())
      positive[static_cast<std::size_t>(key)] = scaled(set, ringTaylorSum(set, block, mirrored), side);
    std::vector<double>& sum = part_taylor_[static_cast<std::size_t>(p)];
    sum = positive[static_cast<std::size_t>(key)];
    for (std::size_t k = 0; k < sum.size(); ++k) {
      const auto& m = set.index(static_cast<int>(k));
      int flips = 0;
      for (std::size_t a = 0; a < 3; ++a)
        if (u[a] < 0.0) flips += m[a];
      if (flips % 2) sum[k] = -sum[k];
    }
  }
  unit_charge_ = unitLatticeSum(set, ring_taylor_, set.find(0, 0, 0), 4, side, levels, block);
  unit_dipole_ = {unitLatticeSum(set, ring_taylor_, set.find(1, 0, 0), 3, side, levels, block),
                  unitLatticeSum(set, ring_taylor_, set.find(0, 1, 0), 3, side, levels, block),
                  unitLatticeSum(set, ring_taylor_, set.find(0, 0, 1), 3, side, levels, block)};
  for (int i = -block; i <= block; ++i)
    for (int j = -block; j <= block; ++j)
      for (int k = -block; k <= block; ++k)
        if (i != 0 || j != 0 || k != 0) sigma_ += 1.0 / std::sqrt(double(i * i + j * j + k * k));
  // d/dh_a of L_m h^m, gathered by monomial: (m_a + 1) L_{m + e_a} h^m, for |m + e_a| <= p.
  for (int m = 0; m < set.size(); ++m) {
    const auto& k = set.index(m);
    for (std::uint8_t a = 0; a < 3; ++a) {
      const int up = set.find(k[0] + (a == 0), k[1] + (a == 1), k[2] + (a == 2));
      if (up >= 0 && up < set.size())
        gradient_terms_.push_back({static_cast<std::size_t>(m), static_cast<std::size_t>(up), a,
                                   static_cast<double>(k[a] + 1)});
    }
  }
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
  // Levels 1 and up, and the monopole's and dipole's sums (point sources: no part of the box's
  // extent in their truncation), about the centre.
  std::vector<double> outer(n, 0.0);
  if (levels_ > 1)
    outer = latticeSum(set_, ring_taylor_, supercell(set_, high, side_, block_), side_ * (2 * block_ + 1),
                       levels_ - 1, block_);
  for (std::size_t k = 0; k < n; ++k)
    outer[k] += charge_ * unit_charge_[k] - dipole_.x * unit_dipole_[0][k] - dipole_.y * unit_dipole_[1][k] -
                dipole_.z * unit_dipole_[2][k];
  // The first ring into each part's own expansion: the target's extent in the M2L's truncation
  // is then the part's, not the box's (the source's is the whole box's either way).
  polynomials_.assign(part_taylor_.size() * 4 * n, 0.0);
  part_centres_.resize(part_taylor_.size());
  std::vector<double> local(n);
  for (std::size_t p = 0; p < part_taylor_.size(); ++p) {
    part_centres_[p] = partCentre(static_cast<int>(p));
    std::fill(local.begin(), local.end(), 0.0);
    set_.shiftLocal(outer, part_centres_[p] - centre_, local);
    contractIntoLocal(set_, part_taylor_[p], high, local);
    double* polynomials = polynomials_.data() + p * 4 * n;
    std::copy(local.begin(), local.end(), polynomials);
    for (const GradientTerm& term : gradient_terms_)
      polynomials[(1 + term.axis) * n + term.monomial] = term.factor * local[term.coefficient];
  }
  constant_ = (kWigner - sigma_) * charge_ / side_;
}

Vec3d PeriodicLattice::partCentre(int p) const {
  const std::array<int, 3> index = partAxes(p);
  Vec3d x;
  for (std::size_t a = 0; a < 3; ++a) x[a] = centre_[a] + ((index[a] + 0.5) / kParts - 0.5) * side_;
  return x;
}

LatticeField PeriodicLattice::field() const {
  require(!polynomials_.empty(), "PeriodicLattice::field", "no box yet: call setBox() first");
  LatticeField f;
  f.polynomials = polynomials_.data();
  f.part_centres = part_centres_.data();
  f.coefficients = set_.size();
  f.centre = centre_;
  f.side = side_;
  f.charge = charge_;
  f.second_moment = second_moment_;
  f.constant = constant_;
  f.dipole = dipole_;
  return f;
}

void PeriodicLattice::evaluate(const Vec3d& x, double* phi, Vec3d* gradient) const {
  const LatticeField f = field();
  const int p = f.partOf(x);
  std::array<double, kMaxCoefficients> power;
  set_.powers(x - part_centres_[static_cast<std::size_t>(p)], set_.order(), power);
  f.addPolynomials(p, power.data(), phi, gradient);
  f.addBackground(x, phi, gradient);
}

}  // namespace grove::fmm
