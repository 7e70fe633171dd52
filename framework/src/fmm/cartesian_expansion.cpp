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
  for (int target = 0; target < n; ++target) {
    contraction_begin_.push_back(static_cast<int>(contraction_.size()));
    const auto& a = indices_[static_cast<std::size_t>(target)];
    for (int k = 0; k < n; ++k) {
      const auto& b = indices_[static_cast<std::size_t>(k)];
      if (degree(target) + degree(k) <= order_)
        contraction_.push_back({static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(find(a[0] + b[0], a[1] + b[1], a[2] + b[2]))});
    }
  }
  contraction_begin_.push_back(static_cast<int>(contraction_.size()));
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

// Sources a block at a time, one SIMD lane each: the Taylor recurrence row by row across the
// lanes, then the contraction as plain multiply-adds over rows. Lanes past the last source carry a
// zero multipole (and r = (1, 0, 0), so the recurrence stays finite).
// Function multiversioning needs ifunc (ELF) and GCC 11's x86-64 levels; a build for AVX2 or
// better already vectorises with it.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && __GNUC__ >= 11 && !defined(__clang__) && \
    !defined(__CUDACC__) && !defined(__AVX2__)
[[gnu::target_clones("arch=x86-64-v3", "default")]]
#endif
void MultiIndexSet::multipolesToLocal(std::span<const double* const> multipoles, std::span<const Vec3d> r,
                                      std::span<double> local) const {
  constexpr int kLanes = 16;
  constexpr int kRows = kMaxCoefficients;
  const int rows = size();
  // Row `rows` is all zeros: the recurrence's absent lower neighbours point there.
  alignas(64) double d[kRows + 1][kLanes];
  alignas(64) double m[kRows][kLanes];
  alignas(64) double rx[kLanes], ry[kLanes], rz[kLanes], inv_r2[kLanes];
  for (int s = 0; s < kLanes; ++s) d[rows][s] = 0.0;
  const std::size_t count = multipoles.size();
  for (std::size_t first = 0; first < count; first += kLanes) {
    const int lanes = static_cast<int>(std::min<std::size_t>(kLanes, count - first));
    for (int s = 0; s < kLanes; ++s) {
      const Vec3d v = s < lanes ? r[first + static_cast<std::size_t>(s)] : Vec3d(1.0, 0.0, 0.0);
      rx[s] = v.x, ry[s] = v.y, rz[s] = v.z;
      inv_r2[s] = 1.0 / norm2(v);
      d[0][s] = std::sqrt(inv_r2[s]);
    }
    for (int i = 1; i < rows; ++i) {
      const auto& low = lower_[static_cast<std::size_t>(i)];
      auto row = [&](int j) { return j >= 0 ? d[j] : d[rows]; };
      const double *x1 = row(low[0]), *y1 = row(low[1]), *z1 = row(low[2]);
      const double *x2 = row(low[3]), *y2 = row(low[4]), *z2 = row(low[5]);
      const double deg = degree(i), c1 = -(2.0 * deg - 1.0) / deg, c2 = -(deg - 1.0) / deg;
      double* out = d[i];
#pragma omp simd aligned(out, x1, y1, z1, x2, y2, z2 : 64)
      for (int s = 0; s < kLanes; ++s)
        out[s] = (c1 * (rx[s] * x1[s] + ry[s] * y1[s] + rz[s] * z1[s]) + c2 * (x2[s] + y2[s] + z2[s])) * inv_r2[s];
    }
    // D_m = m! T_m and M_k / k!, lane by lane.
    for (int i = 0; i < rows; ++i) {
      const double f = factorial_[static_cast<std::size_t>(i)];
#pragma omp simd
      for (int s = 0; s < kLanes; ++s) d[i][s] *= f;
    }
    for (int s = 0; s < kLanes; ++s) {
      if (s < lanes) {
        const double* source = multipoles[first + static_cast<std::size_t>(s)];
        for (int k = 0; k < rows; ++k) m[k][s] = source[k] * inverse_factorial_[static_cast<std::size_t>(k)];
      } else {
        for (int k = 0; k < rows; ++k) m[k][s] = 0.0;
      }
    }
    for (int n = 0; n < rows; ++n) {
      alignas(64) double sum[kLanes] = {};
      for (int t = contraction_begin_[static_cast<std::size_t>(n)]; t < contraction_begin_[static_cast<std::size_t>(n) + 1]; ++t) {
        const double* mk = m[contraction_[static_cast<std::size_t>(t)][0]];
        const double* dm = d[contraction_[static_cast<std::size_t>(t)][1]];
#pragma omp simd aligned(mk, dm : 64)
        for (int s = 0; s < kLanes; ++s) sum[s] += dm[s] * mk[s];
      }
      double total = 0.0;
      for (int s = 0; s < kLanes; ++s) total += sum[s];
      local[static_cast<std::size_t>(n)] += inverse_factorial_[static_cast<std::size_t>(n)] * total;
    }
  }
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
