#pragma once
// Particle-by-particle comparison of two runs of the SPH passes over the same particles (same
// order): the largest and the median difference of each result, relative to a scale that stays
// meaningful where the quantity itself is near zero. Used where one path is checked against
// another (the engine path's host iteration against the density kernel, tests/sph; the GPU
// paths against the CPU kernels, tests/gpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "shock_tube.hpp"
#include "sph_test_support.hpp"

namespace sph::testing {

struct Spread {
  double median = 0, max = 0;
};

inline Spread spreadOf(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.back()};
}

// h, dens: relative to each particle's own value; grad_h: absolute (it is about 1); div v and
// |curl v|: relative to the largest |div v| + |curl v| of the reference (both vanish where the
// flow is uniform). Mismatches: particles whose neighbour count or search flag differ.
struct DensityDifferences {
  Spread h, dens, grad_h, div_v, curl_v;
  int mismatches = 0;
};

inline DensityDifferences densityDifferences(const Gas& got, const Gas& ref) {
  EXPECT_EQ(got.size(), ref.size());
  double div_scale = 0.0;
  for (const auto& r : ref) div_scale = std::max(div_scale, std::abs(r.div_v) + r.curl_v);
  if (div_scale == 0.0) div_scale = 1.0;
  std::vector<double> h, dens, grad_h, div, curl;
  DensityDifferences d;
  for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    const GasParticle &g = got[i], &r = ref[i];
    EXPECT_EQ(g.id, r.id) << "the runs must keep the particles in the same order";
    h.push_back(std::abs(g.h - r.h) / r.h);
    dens.push_back(r.dens > 0.0 ? std::abs(g.dens - r.dens) / r.dens : std::abs(g.dens));
    grad_h.push_back(std::abs(g.grad_h - r.grad_h));
    div.push_back(std::abs(g.div_v - r.div_v) / div_scale);
    curl.push_back(std::abs(g.curl_v - r.curl_v) / div_scale);
    d.mismatches += g.n_neighbours != r.n_neighbours || g.search_too_small != r.search_too_small;
  }
  d.h = spreadOf(h), d.dens = spreadOf(dens), d.grad_h = spreadOf(grad_h);
  d.div_v = spreadOf(div), d.curl_v = spreadOf(curl);
  return d;
}

inline void printDifferences(const std::string& what, const DensityDifferences& d) {
  std::printf("  [%s] density pass, median / max: h %.2e / %.2e  rho %.2e / %.2e  grad-h %.2e / %.2e  "
              "div v %.2e / %.2e  curl v %.2e / %.2e  count mismatches %d\n",
              what.c_str(), d.h.median, d.h.max, d.dens.median, d.dens.max, d.grad_h.median, d.grad_h.max,
              d.div_v.median, d.div_v.max, d.curl_v.median, d.curl_v.max, d.mismatches);
}

// Every difference within max_bound and every median within median_bound; counts equal.
inline void expectWithin(const std::string& what, const DensityDifferences& d, double max_bound, double median_bound) {
  printDifferences(what, d);
  for (const Spread* s : {&d.h, &d.dens, &d.grad_h, &d.div_v, &d.curl_v}) {
    EXPECT_LE(s->max, max_bound) << what;
    EXPECT_LE(s->median, median_bound) << what;
  }
  EXPECT_EQ(d.mismatches, 0) << what << ": neighbour counts or search flags differ";
}

// acc: |a_got - a_ref| over the reference's largest |a| (accelerations cancel to rounding where
// the gas is uniform); du/dt likewise; v_signal relative to its own value.
struct HydroDifferences {
  Spread acc, du_dt, v_signal;
};

inline HydroDifferences hydroDifferences(const Gas& got, const Gas& ref) {
  EXPECT_EQ(got.size(), ref.size());
  double acc_scale = 0.0, du_scale = 0.0;
  for (const auto& r : ref) acc_scale = std::max(acc_scale, grove::norm(r.acc)), du_scale = std::max(du_scale, std::abs(r.du_dt));
  if (acc_scale == 0.0) acc_scale = 1.0;
  if (du_scale == 0.0) du_scale = 1.0;
  std::vector<double> acc, du, vs;
  for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    const GasParticle &g = got[i], &r = ref[i];
    EXPECT_EQ(g.id, r.id) << "the runs must keep the particles in the same order";
    acc.push_back(grove::norm(g.acc - r.acc) / acc_scale);
    du.push_back(std::abs(g.du_dt - r.du_dt) / du_scale);
    vs.push_back(std::abs(g.v_signal - r.v_signal) / r.v_signal);
  }
  return {spreadOf(acc), spreadOf(du), spreadOf(vs)};
}

inline void expectWithin(const std::string& what, const HydroDifferences& d, double max_bound, double median_bound) {
  std::printf("  [%s] hydro pass, median / max: acc %.2e / %.2e  du/dt %.2e / %.2e  v_signal %.2e / %.2e\n",
              what.c_str(), d.acc.median, d.acc.max, d.du_dt.median, d.du_dt.max, d.v_signal.median, d.v_signal.max);
  for (const Spread* s : {&d.acc, &d.du_dt, &d.v_signal}) {
    EXPECT_LE(s->max, max_bound) << what;
    EXPECT_LE(s->median, median_bound) << what;
  }
}

// Bitwise equality of what the passes write, particle by particle.
inline bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline int densityBitDifferences(const Gas& a, const Gas& b) {
  int n = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const GasParticle &p = a[i], &q = b[i];
    n += !(sameBits(p.h, q.h) && sameBits(p.dens, q.dens) && sameBits(p.grad_h, q.grad_h) &&
           sameBits(p.div_v, q.div_v) && sameBits(p.curl_v, q.curl_v) && p.n_neighbours == q.n_neighbours &&
           p.search_too_small == q.search_too_small);
  }
  return n + static_cast<int>(std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
}

inline int hydroBitDifferences(const Gas& a, const Gas& b) {
  int n = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const GasParticle &p = a[i], &q = b[i];
    n += !(sameBits(p.acc.x, q.acc.x) && sameBits(p.acc.y, q.acc.y) && sameBits(p.acc.z, q.acc.z) &&
           sameBits(p.du_dt, q.du_dt) && sameBits(p.v_signal, q.v_signal));
  }
  return n + static_cast<int>(std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
}

// A copy of a particle system (same particles, same order, same communicator).
inline Gas copyOf(const Gas& gas) {
  Gas copy;
  copy.add(gas.particles());
  return copy;
}

// Two shock-tube runs' binned profiles (sph::binProfiles, collective): the largest relative
// difference of density, x-velocity (over the largest |velocity| of the reference's bins) and
// pressure; every bin must hold the same number of particles in both.
inline double largestProfileDifference(const Gas& got, const Gas& ref, const ShockTube& tube, int n_bins, double time) {
  const auto bins_ref = binProfiles(ref, tube, n_bins, time), bins_got = binProfiles(got, tube, n_bins, time);
  double v_bins = 0.0, worst = 0.0;
  for (const auto& b : bins_ref) v_bins = std::max(v_bins, std::abs(b.velocity));
  for (std::size_t b = 0; b < bins_ref.size(); ++b) {
    EXPECT_EQ(bins_got[b].count, bins_ref[b].count) << "bin " << b;
    if (bins_ref[b].count == 0) continue;
    worst = std::max({worst, std::abs(bins_got[b].density - bins_ref[b].density) / bins_ref[b].density,
                      std::abs(bins_got[b].velocity - bins_ref[b].velocity) / v_bins,
                      std::abs(bins_got[b].pressure - bins_ref[b].pressure) / bins_ref[b].pressure});
  }
  return worst;
}

}  // namespace sph::testing
