#pragma once
// Force comparisons shared by the GPU-resident tests (one rank and several).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "gravity_particles.hpp"

namespace resident_test {

inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

// Relative differences per particle. The device sums the same interactions in another order, in
// float as the CPU kernels do: medians stay below 1e-6 and 99.9 % of particles below 1e-5; the
// few particles whose pulls nearly cancel (|a| small against its terms) reach a few 1e-5, as the
// multiwalk engine against the CPU tree does (tree_multiwalk_test.cpp, doc/gpu.md).
// The median bound holds for lists of up to 1600 terms per particle (the one-rank tests' 60000
// bodies); rounding differences of two float sums in different orders grow as the square root
// of the number of terms, so for longer lists (terms_per_body: interactions / bodies; a global
// tree's lists on several ranks are longer) the median bound grows by sqrt(terms / 1600).
inline void expectSameForces(const std::vector<user::GravityForce>& got, const std::vector<user::GravityForce>& ref,
                             const char* what, double terms_per_body = 0.0) {
  ASSERT_EQ(got.size(), ref.size());
  ASSERT_FALSE(ref.empty()) << what;
  std::vector<double> acc, pot;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const grove::Vec3d a(got[i].acc), b(ref[i].acc);
    acc.push_back(grove::norm(a - b) / grove::norm(b));
    pot.push_back(std::abs(double(got[i].pot) - double(ref[i].pot)) / std::abs(double(ref[i].pot)));
  }
  const double acc_median = quantile(acc, 0.5), acc_p999 = quantile(acc, 0.999), acc_max = quantile(acc, 1.0);
  const double pot_median = quantile(pot, 0.5), pot_max = quantile(pot, 1.0);
  std::printf("  [%s] %zu bodies: acc median %.2e p99.9 %.2e max %.2e, pot median %.2e max %.2e\n", what, acc.size(),
              acc_median, acc_p999, acc_max, pot_median, pot_max);
  const double median_bound = 1e-6 * std::max(1.0, std::sqrt(terms_per_body / 1600.0));
  EXPECT_LE(acc_median, median_bound) << what << " (" << terms_per_body << " terms per body)";
  EXPECT_LE(acc_p999, 1e-5) << what;
  EXPECT_LE(acc_max, 1e-4) << what;
  EXPECT_LE(pot_median, median_bound) << what;
  EXPECT_LE(pot_max, 1e-5) << what;
}

}  // namespace resident_test
