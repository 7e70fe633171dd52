#pragma once
/// @file
/// Cartesian expansions of the 1/r potential to a selectable order p (1 ... 8), for grove's fast
/// multipole method (grove/fmm/fmm_force.hpp). Everything is in Taylor-coefficient form over
/// multi-indices k = (kx, ky, kz), |k| = kx + ky + kz <= p, with x^k = x^kx y^ky z^kz:
///
///     T_k(r) = (1/k!) d^k (1/|r|) / dr^k           the Taylor coefficients of 1/r at r
///     M_k    = sum_j m_j (z - y_j)^k               a cell's multipole about its centre z
///     phi(x) = sum_k T_k(x - z) M_k                the cell's potential sum_j m_j / |x - y_j| far away
///     L_n    : phi(z' + h) = sum_n L_n h^n         a local expansion about z'
///
/// and the operators between them (P2M, M2M, M2L, L2L, L2P), each an exact polynomial identity
/// except M2L, which keeps the terms with |k| + |n| <= p. Because that truncation and the
/// coefficients are symmetric in the two cells (T_m(-r) = (-1)^|m| T_m(r), bit for bit through the
/// recurrence), the two directions of a cell pair give equal and opposite total forces (Dehnen
/// 2000): momentum is conserved to rounding.
///
/// T_k follows from the recurrence of Duan & Krasny (2001) for the Taylor coefficients of 1/r:
///     |k| r^2 T_k + (2|k| - 1) sum_i r_i T_{k - e_i} + (|k| - 1) sum_i T_{k - 2 e_i} = 0.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/vec3.hpp"

namespace grove::fmm {

/// The highest expansion order a MultiIndexSet accepts.
inline constexpr int kMaxOrder = 8;
/// Coefficients of an expansion of the highest order, and of degree up to kMaxOrder + 1 (a
/// multipole's gradient): sizes of the operators' scratch arrays.
inline constexpr int kMaxCoefficients = (kMaxOrder + 1) * (kMaxOrder + 2) * (kMaxOrder + 3) / 6;
/// Coefficients of degree up to kMaxOrder + 1 (see kMaxCoefficients).
inline constexpr int kMaxGradientCoefficients = (kMaxOrder + 2) * (kMaxOrder + 3) * (kMaxOrder + 4) / 6;

/// The multi-indices of one order p, by degree, and the index tables of the operators.
/// Immutable once built, so one set may serve several threads. Coefficient arrays (multipoles,
/// local expansions) hold size() doubles in index order; the operators add to their output.
class MultiIndexSet {
 public:
  /// The set of order p = `order`, indices up to degree p + 1. Throws grove::Error unless
  /// 1 <= order <= kMaxOrder.
  explicit MultiIndexSet(int order);

  /// The expansion order p.
  int order() const { return order_; }
  /// Coefficients of an expansion: (p + 1)(p + 2)(p + 3) / 6.
  int size() const { return countUpTo(order_); }
  /// Coefficients of degree below `degree` (the first ones, by degree).
  int sizeBelow(int degree) const { return degree <= 0 ? 0 : countUpTo(degree - 1); }
  /// The multi-index (kx, ky, kz) at position i; needs 0 <= i < sizeBelow(p + 2) (unchecked).
  const std::array<std::uint8_t, 3>& index(int i) const { return indices_[static_cast<std::size_t>(i)]; }
  /// |k| of the multi-index at position i (same range as index()).
  int degree(int i) const { return index(i)[0] + index(i)[1] + index(i)[2]; }
  /// The position of multi-index (a, b, c), or -1 above degree p + 1 (or below zero).
  int find(int a, int b, int c) const {
    if (a < 0 || b < 0 || c < 0 || a >= kSide || b >= kSide || c >= kSide) return -1;
    return lookup_[static_cast<std::size_t>((a * kSide + b) * kSide + c)];
  }

  /// T_k(r) for every |k| <= degree (p, or p + 1 for a multipole's gradient; t.size() >=
  /// sizeBelow(degree + 1)), written (not added) into t.
  void taylorCoefficients(const Vec3d& r, int degree, std::span<double> t) const;
  /// P2M: m (z - y)^k added to M, with d = z - y.
  void addPointMultipole(const Vec3d& d, double m, std::span<double> multipole) const;
  /// M2M: a child's multipole about z_c added to its parent's about z_p; s = z_p - z_c.
  void shiftMultipole(std::span<const double> child, const Vec3d& s, std::span<double> parent) const;
  /// M2L: a source cell's multipole at the far side of r = z_target - z_source, added to the target's
  /// local expansion (the reference the batched form is tested against).
  void multipoleToLocal(std::span<const double> multipole, const Vec3d& r, std::span<double> local) const;
  /// M2L from many sources into one local expansion: local += sum_s M2L(*multipoles[s], r[s]), with
  /// r[s] = z_target - z_source (multipoles and r of equal length). The same sums as
  /// multipoleToLocal (to rounding), evaluated a block of sources at a time across SIMD lanes, in
  /// the harmonic form (harmonicIndices()): n! L_n = sum_k D_{n+k} (M_k / k!), D_m = m! T_m.
  /// It folds every multipole on each call: a caller whose sources serve many targets folds each
  /// once (foldMultipole) and calls harmonicMultipolesToLocal.
  void multipolesToLocal(std::span<const double* const> multipoles, std::span<const Vec3d> r,
                         std::span<double> local) const;
  /// A multipole folded onto the harmonic indices (foldTerms()), written (not added) into
  /// folded[0, harmonicIndices().size()), which must not overlap multipole.
  void foldMultipole(std::span<const double> multipole, std::span<double> folded) const;
  /// multipolesToLocal from folded multipoles (foldMultipole), each harmonicIndices().size() long.
  void harmonicMultipolesToLocal(std::span<const double* const> folded, std::span<const Vec3d> r,
                                 std::span<double> local) const;
  /// L2L: a parent's local expansion about z_p added to its child's about z_c; t = z_c - z_p.
  void shiftLocal(std::span<const double> parent, const Vec3d& t, std::span<double> child) const;
  /// x^k for every |k| <= degree (at most p + 1; out.size() >= sizeBelow(degree + 1)), in index
  /// order, written (not added) into out.
  void powers(const Vec3d& x, int degree, std::span<double> out) const;
  /// L2P: phi and its gradient at z + h, added to *phi and *gradient.
  void evaluateLocal(std::span<const double> local, const Vec3d& h, double* phi, Vec3d* gradient) const;
  /// M2P: phi and its gradient at x from a multipole about z (r = x - z), for tests and leaves;
  /// added to *phi and *gradient.
  void evaluateMultipole(std::span<const double> multipole, const Vec3d& r, double* phi, Vec3d* gradient) const;

  // The tables behind the operators, for a device copy of them (grove/fmm/device_far_field_gpu.h).
  /// One term of an operator table: out[target] += weight * a[first] * b[second].
  struct Term {  // out[target] += weight * a[first] * b[second]
    /// @var target
    /// Position of the output coefficient.
    /// @var first
    /// Position in the first operand.
    /// @var second
    /// Position (or power index) in the second operand.
    std::uint16_t target, first, second;
    double weight;                        ///< the term's constant factor
  };
  /// Per index up to degree p + 1: k - e_x, k - e_y, k - e_z, k - 2 e_x, k - 2 e_y, k - 2 e_z (-1
  /// where absent).
  std::span<const std::array<int, 6>> lowerNeighbours() const { return lower_; }
  /// The full Cartesian contraction (the periodic lattice's M2L, whose summed coefficients need
  /// not be harmonic): for local coefficient n, the (k, n + k) pairs
  /// contraction()[contractionBegin()[n] .. contractionBegin()[n + 1]). size() + 1 offsets.
  std::span<const int> contractionBegin() const { return contraction_begin_; }
  /// The (k, n + k) position pairs of the full contraction, grouped by n (see contractionBegin()).
  std::span<const std::array<std::uint16_t, 2>> contraction() const { return contraction_; }
  /// The harmonic M2L's indices: the (p + 1)^2 positions of degree <= p with kz <= 1, by degree
  /// (the rank j of a position here is its harmonic position). D_m = m! T_m is harmonic,
  /// D_{m + 2e_z} = -D_{m + 2e_x} - D_{m + 2e_y}, and so is the local expansion the truncated M2L
  /// gives; so the contraction needs only these rows of M (folded) and of L (the rest follow).
  std::span<const std::uint16_t> harmonicIndices() const { return harmonic_; }
  /// The multipole folded onto the harmonic indices: folded[target] += weight * M[first] (target a
  /// harmonic position, first a position of degree <= p; weight holds 1 / k! and the trace
  /// identity's signs and counts), so that sum_k D_{n+k} M_k / k! = sum_j D_{n+k_j} folded[j] over
  /// any degree of k.
  std::span<const Term> foldTerms() const { return fold_; }
  /// The harmonic M2L's contraction, grouped by harmonic position n (harmonicIndices().size() + 1
  /// offsets into harmonicContraction()): the pairs (harmonic position j, position of n + k_j) with
  /// |n| + |k_j| <= p.
  std::span<const int> harmonicContractionBegin() const { return harmonic_begin_; }
  /// The pairs of the harmonic contraction (see harmonicContractionBegin()).
  std::span<const std::array<std::uint16_t, 2>> harmonicContraction() const { return harmonic_contraction_; }
  /// The rows of D the harmonic contraction reads: positions of degree <= p with kz <= 2, ascending.
  /// Their recurrence reads only rows of the same kind (k - e_i, k - 2e_i).
  std::span<const std::uint16_t> harmonicTaylorRows() const { return harmonic_rows_; }
  /// The rest of n! L_n from the harmonic part: {n, a, b} means s[n] = -s[a] - s[b] (a = n - 2e_z +
  /// 2e_x, b = n - 2e_z + 2e_y), in an order in which a and b are known before n.
  std::span<const std::array<std::uint16_t, 3>> unfoldSteps() const { return unfold_; }
  /// k! (kx! ky! kz!) per index of degree <= p.
  std::span<const double> factorials() const { return factorial_; }
  /// 1 / k! per index of degree <= p.
  std::span<const double> inverseFactorials() const { return inverse_factorial_; }
  /// L2L: child[target] += weight * parent[first] * t^second.
  std::span<const Term> localShiftTerms() const { return l2l_; }
  /// M2M: parent[target] += weight * child[first] * s^second, grouped by target (ascending), in
  /// the order shiftMultipole() adds them.
  std::span<const Term> multipoleShiftTerms() const { return m2m_; }

 private:
  static constexpr int kSide = kMaxOrder + 2;  // multi-indices up to degree p + 1
  int countUpTo(int degree) const { return (degree + 1) * (degree + 2) * (degree + 3) / 6; }
  void buildContraction(std::span<const std::uint16_t> targets, std::span<const std::uint16_t> sources,
                        std::vector<int>& begin, std::vector<std::array<std::uint16_t, 2>>& pairs) const;
  void buildHarmonicTables();

  int order_;
  std::vector<std::array<std::uint8_t, 3>> indices_;  // up to degree p + 1, by degree
  std::vector<int> lookup_;
  // Per index k: its lower neighbours k - e_i and k - 2 e_i (-1 where absent), for the recurrence.
  std::vector<std::array<int, 6>> lower_;
  // Per index k: the power x^(k - e_a) that x^k is x_a times, and a (powers()).
  struct PowerStep {
    std::uint16_t from = 0;
    std::uint8_t axis = 0;
  };
  std::vector<PowerStep> power_steps_;
  std::vector<Term> m2m_, m2l_, l2l_;
  // The full contraction (contractionBegin()): per local coefficient n, the (k, n + k) pairs; k! and 1 / k!.
  std::vector<int> contraction_begin_;
  std::vector<std::array<std::uint16_t, 2>> contraction_;
  std::vector<double> factorial_, inverse_factorial_;
  // The harmonic M2L (harmonicIndices() and the tables after it).
  std::vector<std::uint16_t> harmonic_, harmonic_rows_;
  std::vector<Term> fold_;
  std::vector<int> harmonic_begin_;
  std::vector<std::array<std::uint16_t, 2>> harmonic_contraction_;
  std::vector<std::array<std::uint16_t, 3>> unfold_;
};

}  // namespace grove::fmm
