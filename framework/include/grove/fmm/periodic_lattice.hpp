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

#include "grove/core/execution.hpp"
#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"

namespace grove::fmm {

/// The field PeriodicLattice::setBox() made, as flat arrays (PeriodicLattice::field()), so that it
/// can be evaluated elsewhere (a GPU far field does it in its last kernel) exactly as
/// PeriodicLattice::evaluate() does: at x, in part p = partOf(x), with h^m the powers of
/// h = x - part_centres[p] (MultiIndexSet::powers), phi and its gradient gain the part's four
/// polynomials (addPolynomials), then the Ewald terms (addBackground). Views the lattice's arrays:
/// valid until its next setBox() or its destruction.
struct LatticeField {
  /// The box is split into kPartsPerAxis^3 parts, each with its own expansion.
  static constexpr int kPartsPerAxis = 4;
  /// Per part, 4 * coefficients values: the coefficients of phi, then of d phi / dx, dy and dz,
  /// over the monomials h^m in the expansion's order.
  const double* polynomials = nullptr;
  const Vec3d* part_centres = nullptr;  ///< kPartsPerAxis^3 of them
  int coefficients = 0;                 ///< monomials per polynomial (MultiIndexSet::size())
  Vec3d centre;                         ///< the box's centre
  double side = 0.0;                    ///< the box's edge
  /// @var charge
  /// Q, the box's total charge.
  /// @var second_moment
  /// S2 = sum q_j |x_j - centre|^2.
  /// @var constant
  /// (xi - sigma) Q / L (see the top of this file).
  double charge = 0.0, second_moment = 0.0, constant = 0.0;
  Vec3d dipole;  ///< D = sum q_j (x_j - centre)

  /// The part holding x (a point outside the box counts to the nearest part).
  GROVE_HOST_DEVICE int partOf(const Vec3d& x) const {
    return partAt((x - centre) / side + Vec3d(0.5, 0.5, 0.5));
  }
  /// The part at `fraction` of the box along each axis (0 ... 1; clamped to the nearest part).
  GROVE_HOST_DEVICE static int partAt(const Vec3d& fraction) {
    // Truncation is floor here: a negative fraction is clamped to part 0 either way.
    auto axis = [](double f) {
      const int i = static_cast<int>(f * kPartsPerAxis);
      return i < 0 ? 0 : (i > kPartsPerAxis - 1 ? kPartsPerAxis - 1 : i);
    };
    return (axis(fraction.x) * kPartsPerAxis + axis(fraction.y)) * kPartsPerAxis + axis(fraction.z);
  }
  /// Adds part p's polynomials at the powers h^m of x - part_centres[p] to *phi and *gradient.
  GROVE_HOST_DEVICE void addPolynomials(int p, const double* power, double* phi, Vec3d* gradient) const {
    const double* l = polynomials + 4LL * p * coefficients;
    const double *gx = l + coefficients, *gy = gx + coefficients, *gz = gy + coefficients;
    double sum_phi = 0.0, sum_x = 0.0, sum_y = 0.0, sum_z = 0.0;
#if !defined(__CUDA_ARCH__)
#pragma omp simd reduction(+ : sum_phi, sum_x, sum_y, sum_z)
#endif
    for (int m = 0; m < coefficients; ++m) {
      sum_phi += l[m] * power[m];
      sum_x += gx[m] * power[m];
      sum_y += gy[m] * power[m];
      sum_z += gz[m] * power[m];
    }
    *phi += sum_phi;
    *gradient += Vec3d(sum_x, sum_y, sum_z);
  }
  /// Adds the terms that make "near block + lattice" Ewald's sum (the dipole, the background and
  /// the constant) at x to *phi and *gradient.
  GROVE_HOST_DEVICE void addBackground(const Vec3d& x, double* phi, Vec3d* gradient) const {
    constexpr double kPi = 3.14159265358979323846;
    const Vec3d h = x - centre;
    const double volume = side * side * side;
    *gradient += (h * charge - dipole) * (4.0 * kPi / (3.0 * volume));
    const double quadratic = charge * dot(h, h) - 2.0 * dot(dipole, h) + second_moment;
    *phi += 2.0 * kPi / (3.0 * volume) * quadratic + constant;
  }
};

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

  /// The field setBox() made, as flat arrays for an evaluation elsewhere (LatticeField), valid
  /// until the next setBox(). Throws grove::Error before the first setBox().
  LatticeField field() const;

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
  static constexpr int kParts = LatticeField::kPartsPerAxis;
  // A part's index along x, y and z.
  static std::array<int, 3> partAxes(int part) {
    return {part / (kParts * kParts), (part / kParts) % kParts, part % kParts};
  }
  Vec3d partCentre(int part) const;
  std::vector<std::vector<double>> part_taylor_;  // the first ring's summed T at each part's centre
  // Per part, the far images' local expansion about the part's centre, then its gradient as three
  // polynomials over the same monomials (coefficient of h^m: (m_a + 1) L_{m + e_a}), so that an
  // evaluation is four dot products with one table of powers (LatticeField's layout); the terms
  // that make the gradient from the expansion, and the parts' centres (this box's).
  std::vector<double> polynomials_;
  struct GradientTerm {
    std::size_t monomial, coefficient;  // m, and m + e_axis in the expansion
    std::uint8_t axis;
    double factor;  // m_axis + 1
  };
  std::vector<GradientTerm> gradient_terms_;
  std::vector<Vec3d> part_centres_;
};

}  // namespace grove::fmm
