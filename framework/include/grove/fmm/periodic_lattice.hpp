#pragma once
/// @file
/// grove::fmm::PeriodicLattice: the far images of a periodic cube for the fast multipole method
/// (doc/fmm_periodic_plan.md, sections 3 and 4): FmmForce's periodic boxes sum their far images
/// with it.
/// @verbatim
/// A cube of side L, centre c, with charges q_j at x_j (the whole box, every rank's). Its images
/// at x_j + n L, n in Z^3, split into the near block |n_i| <= w, which the caller sums itself,
/// and the rest, which this class sums: the box's multipole about c is carried outwards by
/// supercells of side (2w + 1)^l L (M2M of (2w + 1)^3 copies), and a local expansion gathers,
/// level by level, the M2L of the supercells of the ring between one level's block and the next:
/// about c from the second level on, and the first ring's straight into the expansions of the box's
/// 4^3 parts (so the target's extent in that truncation is a part's). w = 2 (125 images) gives a
/// median error of 7.7e-8 to 9.8e-8 against Ewald at order 8 for charges filling the box; w = 1
/// (27 images) only about 4e-5 to 1.5e-4 (tests/fmm/periodic_lattice_test.cpp). The field jumps
/// by about that error where two parts meet.
/// The monopole and dipole parts are summed apart, on unit multipoles, keeping only the degrees
/// whose sums converge absolutely; the conditionally convergent rest is replaced by the terms
/// that make "block + lattice" the Ewald sum with a uniform neutralising background and tin-foil
/// boundary (grove's PM, tests/pm/ewald.hpp):
///   grad phi += (4 pi / 3V) (Q (x - c) - D)
///   phi      += (2 pi / 3V) sum_j q_j |x - x_j|^2 + (xi - sigma) Q / L
/// with Q = sum q_j, D = sum q_j (x_j - c), xi the Wigner constant of the simple cubic lattice
/// and sigma = sum over the near block's images n != 0 of 1/|n|.
/// @endverbatim
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"

namespace grove::fmm {

/// The potential phi = sum q / r and its gradient, inside a periodic cube, of every image beyond
/// the near block, with the Ewald terms above (see the top of this file). Throws grove::Error for
/// an order below 4, a side that is not positive and finite, levels below 1 or a block other
/// than 1 or 2.
class PeriodicLattice {
 public:
  /// set: the expansions' order; side: the cube's edge; levels: supercell levels summed (each
  /// shrinks the truncation error by about 9); block: the half-width w of the near block the
  /// caller sums ((2w + 1)^3 images; 1 or 2). Sums the lattice of the unit monopole and dipoles,
  /// which depend on nothing else, once.
  PeriodicLattice(const MultiIndexSet& set, double side, int levels = 12, int block = 1);

  /// The box's charges: box_multipole is the whole box's multipole about centre (set.size()
  /// coefficients, every rank's particles). Sums the lattice of its part above the dipole; needed
  /// before evaluate(), and again whenever the charges move.
  void setBox(std::span<const double> box_multipole, const Vec3d& centre);

  /// Adds the lattice's phi and grad phi at x (inside the cube) to *phi and *gradient (after
  /// setBox()).
  void evaluate(const Vec3d& x, double* phi, Vec3d* gradient) const;

  /// The expansions' order.
  int order() const { return set_.order(); }
  /// The cube's edge.
  double side() const { return side_; }
  /// The near block's half-width w: the caller sums the (2w + 1)^3 images n with |n_i| <= w.
  int block() const { return block_; }

  /// The Wigner constant of the simple cubic lattice: a unit charge's Ewald potential at itself,
  /// its own images and the background included, is xi / L.
  static constexpr double kWigner = -2.8372974794806;

 private:
  MultiIndexSet set_;
  double side_;
  int levels_, block_;
  double sigma_ = 0.0;                      // sum over the near block's images n != 0 of 1/|n|
  std::vector<double> ring_taylor_;         // T_m summed over a level's ring, cells of side 1
  std::vector<double> unit_charge_;         // the unit monopole's lattice, degrees 4 and up
  std::array<std::vector<double>, 3> unit_dipole_;  // the unit dipoles', degrees 3 and up
  Vec3d centre_;
  double charge_ = 0.0, second_moment_ = 0.0;  // Q, S2 = sum q_j |x_j - c|^2
  Vec3d dipole_;                                // D
  double constant_ = 0.0;                       // (xi - sigma) Q / L
  // The box split into kParts^3 parts, each with its own local expansion: the first ring's M2L
  // truncation then sees a part's extent on the target side, not the whole box's.
  static constexpr int kParts = 4;
  // The part of a point at `fraction` of the box along each axis (0 ... 1, clamped), and its centre.
  static int partIndex(const Vec3d& fraction);
  // A part's index along x, y and z.
  static std::array<int, 3> partAxes(int part) {
    return {part / (kParts * kParts), (part / kParts) % kParts, part % kParts};
  }
  Vec3d partCentre(int part) const;
  std::vector<std::vector<double>> part_taylor_;  // the first ring's summed T at each part's centre
  std::vector<std::vector<double>> local_;        // the far images' local expansion about each part's centre
  // Each part's gradient as three polynomials over the same monomials (coefficient of h^m:
  // (m_a + 1) L_{m + e_a}), so that an evaluation is four dot products with one table of powers;
  // the terms that make them from local_, and the parts' centres (this box's).
  std::vector<std::array<std::vector<double>, 3>> gradient_;
  struct GradientTerm {
    std::size_t monomial, coefficient;  // m, and m + e_axis in local_
    std::uint8_t axis;
    double factor;  // m_axis + 1
  };
  std::vector<GradientTerm> gradient_terms_;
  std::vector<Vec3d> part_centres_;
};

}  // namespace grove::fmm
