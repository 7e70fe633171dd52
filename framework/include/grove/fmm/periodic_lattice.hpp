#pragma once
/// @file
/// grove::fmm::PeriodicLattice: the far images of a periodic cube for the fast multipole method
/// (doc/fmm_periodic_plan.md, section 3 and 4). Work in progress: not yet used by FmmForce.
/// @verbatim
/// A cube of side L, centre c, with charges q_j at x_j (the whole box, every rank's). Its images
/// at x_j + n L, n in Z^3, split into the block |n_i| <= 1 (the box and its 26 neighbours),
/// which the caller sums itself, and the rest, which this class sums: the box's multipole about c
/// is carried outwards by supercells of side 3^l L (M2M of 27 copies) and its local expansion at
/// c gathers, level by level, the M2L of the 9^3 - 3^3 supercells of the ring around the block.
/// The monopole and dipole parts are summed apart, on unit multipoles, keeping only the degrees
/// whose sums converge absolutely; the conditionally convergent rest is replaced by the terms
/// that make "block + lattice" the Ewald sum with a uniform neutralising background and tin-foil
/// boundary (grove's PM, tests/pm/ewald.hpp):
///   grad phi += (4 pi / 3V) (Q (x - c) - D)
///   phi      += (2 pi / 3V) sum_j q_j |x - x_j|^2 + (xi - sigma) Q / L
/// with Q = sum q_j, D = sum q_j (x_j - c), xi the Wigner constant of the simple cubic lattice
/// and sigma = sum over the 26 neighbours of 1/|n|.
/// @endverbatim
#include <span>
#include <vector>

#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"

namespace grove::fmm {

/// The potential phi = sum q / r and its gradient, inside a periodic cube, of every image beyond
/// the 27-image block, with the Ewald terms above (see the top of this file).
class PeriodicLattice {
 public:
  /// set: the expansions' order; box_multipole: the whole box's multipole about centre (set.size()
  /// coefficients, every rank's particles); side: the cube's edge; levels: supercell levels summed
  /// (each shrinks the truncation error by about 9); block: the half-width w of the near block
  /// the caller sums ((2w + 1)^3 images; 1 or 2).
  PeriodicLattice(const MultiIndexSet& set, std::span<const double> box_multipole, const Vec3d& centre,
                  double side, int levels = 12, int block = 1);

  /// Adds the lattice's phi and grad phi at x (inside the cube) to *phi and *gradient.
  void evaluate(const Vec3d& x, double* phi, Vec3d* gradient) const;

  /// The Wigner constant of the simple cubic lattice: a unit charge's Ewald potential at itself,
  /// its own images and the background included, is xi / L.
  static constexpr double kWigner = -2.8372974794806;

 private:
  const MultiIndexSet& set_;
  Vec3d centre_;
  double side_;
  double charge_ = 0.0, second_moment_ = 0.0;  // Q, S2 = sum q_j |x_j - c|^2
  Vec3d dipole_;                                // D
  double constant_ = 0.0;                       // (xi - sigma) Q / L
  std::vector<double> local_;                   // the far images' local expansion about c
};

}  // namespace grove::fmm
