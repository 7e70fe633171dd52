// grove::fmm::MultiIndexSet (grove/fmm/cartesian_expansion.hpp): the multi-indices of an order, the
// operators' term tables, built once, and the operators as loops over them.
#include "grove/fmm/cartesian_expansion.hpp"

#include <algorithm>
#include <cmath>

#include "grove/core/error.hpp"

namespace grove::fmm {

namespace {

double binomial(int n, int k) {
  double b = 1.0;
  for (int i = 1; i <= k; ++i) b = b * static_cast<double>(n - k + i) / static_cast<double>(i);
  return b;
}

}  // namespace

MultiIndexSet::MultiIndexSet(int order) : order_(order), lookup_(kSide * kSide * kSide, -1) {
  require(order >= 1 && order <= kMaxOrder, "fmm::MultiIndexSet", "expansion order {} is outside 1 ... {}", order,
          kMaxOrder);
  for (int total = 0; total <= order + 1; ++total)
    for (int a = total; a >= 0; --a)
      for (int b = total - a; b >= 0; --b) {
        const int c = total - a - b;
        lookup_[static_cast<std::size_t>((a * kSide + b) * kSide + c)] = static_cast<int>(indices_.size());
        indices_.push_back({static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(c)});
      }
  lower_.resize(indices_.size());
  power_steps_.resize(indices_.size());
  for (std::size_t i = 0; i < indices_.size(); ++i) {
    const auto& k = indices_[i];
    for (int axis = 0; axis < 3; ++axis) {
      auto minus = [&](int by) {
        const int a = k[0] - (axis == 0 ? by : 0), b = k[1] - (axis == 1 ? by : 0), c = k[2] - (axis == 2 ? by : 0);
        return find(a, b, c);
      };
      lower_[i][static_cast<std::size_t>(axis)] = minus(1);
      lower_[i][static_cast<std::size_t>(axis + 3)] = minus(2);
    }
    // x^k = x^(k - e_a) x_a along the first axis a with k_a > 0.
    if (i > 0) {
      const std::size_t axis = k[0] > 0 ? 0 : (k[1] > 0 ? 1 : 2);
      power_steps_[i] = {static_cast<std::uint16_t>(lower_[i][axis]), static_cast<std::uint8_t>(axis)};
    }
  }

  // The operators' terms, over the indices of degree <= p.
  const int n = size();
  auto multinomial = [&](int sum, int part) {  // C(sum, part) per axis, multiplied
    const auto &s = indices_[static_cast<std::size_t>(sum)], &q = indices_[static_cast<std::size_t>(part)];
    return binomial(s[0], q[0]) * binomial(s[1], q[1]) * binomial(s[2], q[2]);
  };
  auto term = [](int target, int first, int second, double weight) {
    return Term{static_cast<std::uint16_t>(target), static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(second),
                weight};
  };
  for (int k = 0; k < n; ++k)
    for (int l = 0; l < n; ++l) {
      const auto &a = indices_[static_cast<std::size_t>(k)], &b = indices_[static_cast<std::size_t>(l)];
      // M2M: parent[k] += C(k, l) child[l] s^(k - l); L2L: child[l] += C(k, l) parent[k] t^(k - l).
      if (b[0] <= a[0] && b[1] <= a[1] && b[2] <= a[2]) {
        const int diff = find(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
        m2m_.push_back(term(k, l, diff, multinomial(k, l)));
        l2l_.push_back(term(l, k, diff, multinomial(k, l)));
      }
      // M2L: local[n] += C(k + n, n) T_{k+n} M_k, |k| + |n| <= p (here n = k, k = l).
      if (degree(k) + degree(l) <= order_) {
        const int sum = find(a[0] + b[0], a[1] + b[1], a[2] + b[2]);
        const double w = multinomial(sum, k);
        m2l_.push_back(term(k, l, sum, w));
      }
    }
  auto factorial = [](int k) {
    double f = 1.0;
    for (int i = 2; i <= k; ++i) f *= i;
    return f;
  };
  for (int k = 0; k < n; ++k) {
    const auto& a = indices_[static_cast<std::size_t>(k)];
    factorial_.push_back(factorial(a[0]) * factorial(a[1]) * factorial(a[2]));
    inverse_factorial_.push_back(1.0 / factorial_.back());
  }
  std::vector<std::uint16_t> every(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) every[static_cast<std::size_t>(k)] = static_cast<std::uint16_t>(k);
  buildContraction(every, every, contraction_begin_, contraction_);
  buildHarmonicTables();
}

// For each target position n in `targets`, the pairs (j, position of n + k_j) over the positions
// k_j = sources[j] with |n| + |k_j| <= p; begin gets each target's first pair, and one past the last.
void MultiIndexSet::buildContraction(std::span<const std::uint16_t> targets, std::span<const std::uint16_t> sources,
                                     std::vector<int>& begin,
                                     std::vector<std::array<std::uint16_t, 2>>& pairs) const {
  for (const std::uint16_t target : targets) {
    begin.push_back(static_cast<int>(pairs.size()));
    const auto& a = index(target);
    for (std::size_t j = 0; j < sources.size(); ++j) {
      const auto& b = index(sources[j]);
      if (degree(target) + degree(sources[j]) <= order_)
        pairs.push_back({static_cast<std::uint16_t>(j),
                         static_cast<std::uint16_t>(find(a[0] + b[0], a[1] + b[1], a[2] + b[2]))});
    }
  }
  begin.push_back(static_cast<int>(pairs.size()));
}

// The harmonic M2L's tables (harmonicIndices()). For fixed n, k -> D_{n+k} is harmonic in k, so a
// term D_{n+k} c_k with kz >= 2 equals -c_k (D_{n+k-2e_z+2e_x} + D_{n+k-2e_z+2e_y}): folding c = M / k!
// from the highest kz down leaves coefficients on kz <= 1 only, the same for every n. Likewise
// s_n = n! L_n is harmonic in n (the truncation |n| + |k| <= p depends on |n| alone), so only its
// kz <= 1 rows are contracted and the others follow. At order 8: 1 365 multiply-adds an M2L against
// 3 003, and 109 rows of D against 165.
void MultiIndexSet::buildHarmonicTables() {
  const auto n = static_cast<std::size_t>(size());
  for (std::size_t i = 0; i < n; ++i) {
    if (indices_[i][2] <= 1) harmonic_.push_back(static_cast<std::uint16_t>(i));
    if (indices_[i][2] <= 2) harmonic_rows_.push_back(static_cast<std::uint16_t>(i));
  }
  // fold[i][k]: the weight of M_k in coefficient i, from diag(1 / k!) with the kz >= 2 rows moved
  // down two steps of z at a time, highest kz first.
  std::vector<std::vector<double>> fold(n, std::vector<double>(n, 0.0));
  for (std::size_t k = 0; k < n; ++k) fold[k][k] = inverse_factorial_[k];
  for (int z = order_; z >= 2; --z)
    for (std::size_t i = 0; i < n; ++i) {
      const auto& k = indices_[i];
      if (k[2] != z) continue;
      for (const int to : {find(k[0] + 2, k[1], z - 2), find(k[0], k[1] + 2, z - 2)})
        for (std::size_t c = 0; c < n; ++c) fold[static_cast<std::size_t>(to)][c] -= fold[i][c];
    }
  for (std::size_t j = 0; j < harmonic_.size(); ++j)
    for (std::size_t c = 0; c < n; ++c)
      if (const double w = fold[harmonic_[j]][c]; w != 0.0)
        fold_.push_back(Term{static_cast<std::uint16_t>(j), static_cast<std::uint16_t>(c), 0, w});
  buildContraction(harmonic_, harmonic_, harmonic_begin_, harmonic_contraction_);
  for (int z = 2; z <= order_; ++z)
    for (std::size_t i = 0; i < n; ++i) {
      const auto& k = indices_[i];
      if (k[2] == z)
        unfold_.push_back({static_cast<std::uint16_t>(i), static_cast<std::uint16_t>(find(k[0] + 2, k[1], z - 2)),
                           static_cast<std::uint16_t>(find(k[0], k[1] + 2, z - 2))});
    }
}

void MultiIndexSet::powers(const Vec3d& x, int degree, std::span<double> out) const {
  out[0] = 1.0;
  const int count = countUpTo(degree);
  const double axes[3] = {x.x, x.y, x.z};
  for (int i = 1; i < count; ++i) {
    const auto& [from, axis] = power_steps_[static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(i)] = out[from] * axes[axis];
  }
}

void MultiIndexSet::taylorCoefficients(const Vec3d& r, int degree, std::span<double> t) const {
  const double r2 = norm2(r), inv_r2 = 1.0 / r2;
  t[0] = 1.0 / std::sqrt(r2);
  const int count = countUpTo(degree);
  for (int i = 1; i < count; ++i) {
    const auto& low = lower_[static_cast<std::size_t>(i)];
    const int d = this->degree(i);
    double first = 0.0, second = 0.0;
    for (std::size_t axis = 0; axis < 3; ++axis) {
      if (low[axis] >= 0) first += r[axis] * t[static_cast<std::size_t>(low[axis])];
      if (low[axis + 3] >= 0) second += t[static_cast<std::size_t>(low[axis + 3])];
    }
    t[static_cast<std::size_t>(i)] =
        -(static_cast<double>(2 * d - 1) * first + static_cast<double>(d - 1) * second) * inv_r2 / static_cast<double>(d);
  }
}

// addPointMultipole and shiftMultipole: multipole_sums.cpp (compiled without contraction).

void MultiIndexSet::multipoleToLocal(std::span<const double> multipole, const Vec3d& r, std::span<double> local) const {
  std::array<double, kMaxCoefficients> t;
  taylorCoefficients(r, order_, t);
  for (const Term& term : m2l_) local[term.target] += term.weight * multipole[term.first] * t[term.second];
}

void MultiIndexSet::foldMultipole(std::span<const double> multipole, std::span<double> folded) const {
  std::fill(folded.begin(), folded.begin() + static_cast<std::ptrdiff_t>(harmonic_.size()), 0.0);
  for (const Term& term : fold_) folded[term.target] += term.weight * multipole[term.first];
}

void MultiIndexSet::multipolesToLocal(std::span<const double* const> multipoles, std::span<const Vec3d> r,
                                      std::span<double> local) const {
  const std::size_t width = harmonic_.size();
  std::vector<double> folded(multipoles.size() * width);
  std::vector<const double*> pointers(multipoles.size());
  for (std::size_t s = 0; s < multipoles.size(); ++s) {
    foldMultipole(std::span<const double>(multipoles[s], static_cast<std::size_t>(size())),
                  std::span<double>(folded.data() + s * width, width));
    pointers[s] = folded.data() + s * width;
  }
  harmonicMultipolesToLocal(pointers, r, local);
}

// Sources a block at a time, one SIMD lane each, in the harmonic form (buildHarmonicTables): the
// Taylor recurrence over the rows with kz <= 2 across the lanes, the contraction as plain
// multiply-adds over rows for the local coefficients with kz <= 1, and the rest of the local
// expansion from the trace identity once, after every source. Lanes past the last source carry a
// zero multipole (and r = (1, 0, 0), so the recurrence stays finite).
// Function multiversioning needs ifunc (ELF) and GCC 11's x86-64 levels; a build for AVX2 or
// better already vectorises with it.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && __GNUC__ >= 11 && !defined(__clang__) && \
    !defined(__CUDACC__) && !defined(__AVX2__)
[[gnu::target_clones("arch=x86-64-v3", "default")]]
#endif
void MultiIndexSet::harmonicMultipolesToLocal(std::span<const double* const> folded, std::span<const Vec3d> r,
                                              std::span<double> local) const {
  if (folded.empty()) return;
  constexpr int kLanes = 16;
  constexpr int kRows = kMaxCoefficients;
  constexpr int kHarmonicRows = (kMaxOrder + 1) * (kMaxOrder + 1);
  const int rows = size();
  const auto harmonic_count = harmonic_.size();
  // Row `rows` is all zeros: the recurrence's absent lower neighbours point there.
  alignas(64) double d[kRows + 1][kLanes];
  alignas(64) double m[kHarmonicRows][kLanes];
  alignas(64) double rx[kLanes], ry[kLanes], rz[kLanes], inv_r2[kLanes];
  std::array<double, kMaxCoefficients> s_n{};  // n! L_n, summed over the sources for harmonic n
  for (int s = 0; s < kLanes; ++s) d[rows][s] = 0.0;
  const std::size_t count = folded.size();
  for (std::size_t first = 0; first < count; first += kLanes) {
    const int lanes = static_cast<int>(std::min<std::size_t>(kLanes, count - first));
    for (int s = 0; s < kLanes; ++s) {
      const Vec3d v = s < lanes ? r[first + static_cast<std::size_t>(s)] : Vec3d(1.0, 0.0, 0.0);
      rx[s] = v.x, ry[s] = v.y, rz[s] = v.z;
      inv_r2[s] = 1.0 / norm2(v);
      d[0][s] = std::sqrt(inv_r2[s]);
    }
    for (std::size_t row = 1; row < harmonic_rows_.size(); ++row) {
      const int i = harmonic_rows_[row];
      const auto& low = lower_[static_cast<std::size_t>(i)];
      auto at = [&](int j) { return j >= 0 ? d[j] : d[rows]; };
      const double *x1 = at(low[0]), *y1 = at(low[1]), *z1 = at(low[2]);
      const double *x2 = at(low[3]), *y2 = at(low[4]), *z2 = at(low[5]);
      const double deg = degree(i), c1 = -(2.0 * deg - 1.0) / deg, c2 = -(deg - 1.0) / deg;
      double* out = d[i];
#pragma omp simd aligned(out, x1, y1, z1, x2, y2, z2 : 64)
      for (int s = 0; s < kLanes; ++s)
        out[s] = (c1 * (rx[s] * x1[s] + ry[s] * y1[s] + rz[s] * z1[s]) + c2 * (x2[s] + y2[s] + z2[s])) * inv_r2[s];
    }
    // D_m = m! T_m, lane by lane.
    for (const std::uint16_t i : harmonic_rows_) {
      const double f = factorial_[i];
#pragma omp simd
      for (int s = 0; s < kLanes; ++s) d[i][s] *= f;
    }
    for (int s = 0; s < kLanes; ++s) {
      const double* source = s < lanes ? folded[first + static_cast<std::size_t>(s)] : nullptr;
      for (std::size_t j = 0; j < harmonic_count; ++j) m[j][s] = source ? source[j] : 0.0;
    }
    const auto* pairs = harmonic_contraction_.data();
    for (std::size_t n = 0; n < harmonic_count; ++n) {
      alignas(64) double sum[kLanes] = {};
      for (int t = harmonic_begin_[n]; t < harmonic_begin_[n + 1]; ++t) {
        const double* mk = m[pairs[t][0]];
        const double* dm = d[pairs[t][1]];
#pragma omp simd aligned(mk, dm : 64)
        for (int s = 0; s < kLanes; ++s) sum[s] += dm[s] * mk[s];
      }
      double total = 0.0;
      for (int s = 0; s < kLanes; ++s) total += sum[s];
      s_n[harmonic_[n]] += total;
    }
  }
  for (const auto& [target, a, b] : unfold_) s_n[target] = -s_n[a] - s_n[b];
  for (std::size_t k = 0; k < static_cast<std::size_t>(rows); ++k) local[k] += inverse_factorial_[k] * s_n[k];
}

void MultiIndexSet::shiftLocal(std::span<const double> parent, const Vec3d& t, std::span<double> child) const {
  std::array<double, kMaxCoefficients> pw;
  powers(t, order_, pw);
  for (const Term& term : l2l_) child[term.target] += term.weight * parent[term.first] * pw[term.second];
}

void MultiIndexSet::evaluateLocal(std::span<const double> local, const Vec3d& h, double* phi, Vec3d* gradient) const {
  std::array<double, kMaxCoefficients> pw;
  powers(h, order_, pw);
  double p = 0.0;
  Vec3d g{};
  for (int i = 0; i < size(); ++i) {
    const double l = local[static_cast<std::size_t>(i)];
    p += l * pw[static_cast<std::size_t>(i)];
    const auto& k = indices_[static_cast<std::size_t>(i)];
    const auto& low = lower_[static_cast<std::size_t>(i)];
    for (std::size_t axis = 0; axis < 3; ++axis)
      if (k[axis] > 0) g[axis] += l * static_cast<double>(k[axis]) * pw[static_cast<std::size_t>(low[axis])];
  }
  *phi += p;
  *gradient += g;
}

void MultiIndexSet::evaluateMultipole(std::span<const double> multipole, const Vec3d& r, double* phi,
                                      Vec3d* gradient) const {
  std::array<double, kMaxGradientCoefficients> t;
  taylorCoefficients(r, order_ + 1, t);
  double p = 0.0;
  Vec3d g{};
  for (int i = 0; i < size(); ++i) {
    const double m = multipole[static_cast<std::size_t>(i)];
    p += m * t[static_cast<std::size_t>(i)];
    const auto& k = indices_[static_cast<std::size_t>(i)];
    // d/dr_i T_k = (k_i + 1) T_{k + e_i}
    for (int axis = 0; axis < 3; ++axis) {
      const int up = find(k[0] + (axis == 0), k[1] + (axis == 1), k[2] + (axis == 2));
      g[static_cast<std::size_t>(axis)] += m * static_cast<double>(k[static_cast<std::size_t>(axis)] + 1) * t[static_cast<std::size_t>(up)];
    }
  }
  *phi += p;
  *gradient += g;
}

}  // namespace grove::fmm
