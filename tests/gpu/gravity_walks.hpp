#pragma once
// Hand-built gravity walks for the GPU multiwalk tests (until grove's trees call the hooks, the
// tests play the tree): whole EPJ/SPJ arrays, and per walk a group of i-particles with index lists
// into them, plus the gathered per-walk copies the plain form takes. Helpers run a multiwalk over
// them in grove's calling order and compute the CPU reference with user_templates'
// gravity_kernels.hpp on the same lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "cuda/gravity_multiwalk_gpu.h"
#include "gravity_kernels.hpp"
#include "grove/tree/moments.hpp"

namespace grove::gpu_testing {

using user::GravityEPI;
using user::GravityEPJ;
using user::GravityForce;

template <class SPJ>
struct GravityWalks {
  std::vector<GravityEPJ> epj_all;
  std::vector<SPJ> spj_all;
  std::vector<std::vector<GravityEPI>> epi;
  std::vector<std::vector<int>> id_epj, id_spj;
  std::vector<std::vector<GravityEPJ>> epj;  // epj_all[id_epj[w][k]], for the plain form
  std::vector<std::vector<SPJ>> spj;

  int size() const { return static_cast<int>(epi.size()); }
  std::size_t particles() const {
    std::size_t n = 0;
    for (const auto& e : epi) n += e.size();
    return n;
  }
  // Refills the per-walk copies after epj_all or spj_all changed.
  void gather() {
    for (int w = 0; w < size(); ++w) {
      epj[w].clear(), spj[w].clear();
      for (int id : id_epj[w]) epj[w].push_back(epj_all[id]);
      for (int id : id_spj[w]) spj[w].push_back(spj_all[id]);
    }
  }
};

struct WalkShape {
  int n_walk = 64;
  int n_epj_all = 30000, n_spj_all = 3000;
  int max_j = 1200, max_sp = 400;
};

inline grove::Vec3d plummerPosition(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double r;
  do r = 1.0 / std::sqrt(std::pow(u(rng), -2.0 / 3.0) - 1.0);
  while (!(r < 10.0));
  const double c = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng), s = std::sqrt(1.0 - c * c);
  return {r * s * std::cos(phi), r * s * std::sin(phi), r * c};
}

// i-group sizes worth covering: 1, around one block of 128 threads, several blocks, and random.
inline int groupSize(int w, std::mt19937_64& rng) {
  static constexpr int kEdges[] = {1, 2, 127, 128, 129, 255, 256, 257, 500};
  if (w < static_cast<int>(std::size(kEdges))) return kEdges[w];
  return std::uniform_int_distribution<int>(1, 400)(rng);
}

// Superparticles stand for distant cells: a cluster of them around (6, 0, 0), radius 2. Every
// i-group lies within radius 3 of the origin, so their pull adds up rather than cancels, and a
// per-particle relative difference measures rounding, not the cancellation of large terms.
template <class SPJ>
SPJ randomSuperparticle(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), mass(0.5e-2, 1.5e-2);
  SPJ s;
  grove::Vec3d d;
  do d = {u(rng), u(rng), u(rng)};
  while (grove::norm2(d) > 1.0);
  s.pos = grove::Vec3d{6.0, 0.0, 0.0} + 2.0 * d;
  s.mass = mass(rng);
  if constexpr (requires { s.quad; }) {
    // A cell's raw second moment: positive semidefinite, a few point masses spread over ~0.3.
    for (int k = 0; k < 3; ++k) {
      const grove::Vec3d a{0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)};
      s.quad += grove::symmetricOuter(a, a, s.mass / 3.0);
    }
  }
  return s;
}

// i-groups sit in the Plummer sphere's outskirts (1 < r < 3), where its pull does not vanish.
inline grove::Vec3d groupCentre(std::mt19937_64& rng) {
  grove::Vec3d c;
  do c = plummerPosition(rng);
  while (grove::norm(c) < 1.0 || grove::norm(c) > 3.0);
  return c;
}

inline std::vector<int> randomSortedIds(int n, int n_all, std::mt19937_64& rng) {
  std::vector<int> ids(static_cast<std::size_t>(n));
  std::uniform_int_distribution<int> pick(0, n_all - 1);
  for (int& id : ids) id = pick(rng);
  std::sort(ids.begin(), ids.end());  // a tree walk's lists run in key order
  return ids;
}

template <class SPJ>
GravityWalks<SPJ> makeGravityWalks(std::uint64_t seed, const WalkShape& shape = {}) {
  std::mt19937_64 rng(seed);
  GravityWalks<SPJ> g;
  for (int k = 0; k < shape.n_epj_all; ++k) {
    GravityEPJ p;
    p.pos = static_cast<grove::Vec3f>(plummerPosition(rng));
    p.mass = 1.0f / static_cast<float>(shape.n_epj_all);
    g.epj_all.push_back(p);
  }
  for (int k = 0; k < shape.n_spj_all; ++k) g.spj_all.push_back(randomSuperparticle<SPJ>(rng));
  std::uniform_real_distribution<double> offset(-0.05, 0.05);
  std::uniform_int_distribution<int> n_j(0, shape.max_j), n_sp(0, shape.max_sp);
  for (int w = 0; w < shape.n_walk; ++w) {
    const grove::Vec3d centre = groupCentre(rng);
    std::vector<GravityEPI> group(static_cast<std::size_t>(groupSize(w, rng)));
    for (GravityEPI& e : group)
      e.pos = static_cast<grove::Vec3f>(centre + grove::Vec3d{offset(rng), offset(rng), offset(rng)});
    g.epi.push_back(group);
    // Walk 3 has no sources at all, walk 4 only superparticles, walk 5 only particles.
    g.id_epj.push_back(randomSortedIds(w == 3 || w == 4 ? 0 : n_j(rng), shape.n_epj_all, rng));
    g.id_spj.push_back(randomSortedIds(w == 3 || w == 5 ? 0 : n_sp(rng), shape.n_spj_all, rng));
  }
  g.epj.resize(g.epi.size()), g.spj.resize(g.epi.size());
  g.gather();
  return g;
}

// Moves every particle and superparticle a little (a later step with the same lists).
template <class SPJ>
void drift(GravityWalks<SPJ>& g, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1e-2f, 1e-2f);
  for (GravityEPJ& p : g.epj_all) p.pos += grove::Vec3f{d(rng), d(rng), d(rng)};
  for (SPJ& s : g.spj_all) s.pos += grove::Vec3d{d(rng), d(rng), d(rng)};
  for (auto& group : g.epi)
    for (GravityEPI& e : group) e.pos += grove::Vec3f{d(rng), d(rng), d(rng)};
  g.gather();
}

// CPU reference: user_templates/gravity_kernels.hpp on each walk's lists.
template <class SPJ>
std::vector<GravityForce> cpuForces(const GravityWalks<SPJ>& g, float eps2) {
  std::vector<GravityForce> out;
  for (int w = 0; w < g.size(); ++w) {
    std::vector<GravityForce> f(g.epi[w].size());
    const int n_i = static_cast<int>(g.epi[w].size());
    user::GravityMonopoleKernel{eps2}(g.epi[w].data(), n_i, g.epj[w].data(), static_cast<int>(g.epj[w].size()),
                                      f.data());
    if constexpr (std::is_same_v<SPJ, grove::SPJQuadrupole>)
      user::GravityQuadrupoleKernel{eps2}(g.epi[w].data(), n_i, g.spj[w].data(), static_cast<int>(g.spj[w].size()),
                                          f.data());
    else
      user::GravityMonopoleKernel{eps2}(g.epi[w].data(), n_i, g.spj[w].data(), static_cast<int>(g.spj[w].size()),
                                        f.data());
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

// ---- running a multiwalk the way grove's trees call it ------------------------------------------

// The pointer arrays of walks [begin, end): what a tree hands to dispatch.
template <class SPJ>
struct Batch {
  std::vector<const GravityEPI*> epi;
  std::vector<int> n_epi, n_epj, n_spj;
  std::vector<const int*> id_epj, id_spj;
  std::vector<const GravityEPJ*> epj;
  std::vector<const SPJ*> spj;
  std::vector<GravityForce*> force;

  Batch(const GravityWalks<SPJ>& g, int begin, int end, std::vector<GravityForce>& forces,
        const std::vector<std::size_t>& first) {
    for (int w = begin; w < end; ++w) {
      epi.push_back(g.epi[w].data()), n_epi.push_back(static_cast<int>(g.epi[w].size()));
      id_epj.push_back(g.id_epj[w].data()), n_epj.push_back(static_cast<int>(g.id_epj[w].size()));
      id_spj.push_back(g.id_spj[w].data()), n_spj.push_back(static_cast<int>(g.id_spj[w].size()));
      epj.push_back(g.epj[w].data()), spj.push_back(g.spj[w].data());
      force.push_back(forces.data() + first[w]);
    }
  }
  int size() const { return static_cast<int>(epi.size()); }
};

struct RunOrder {
  int walks_per_batch = 16;
  int tag_max = 2;
  bool index_form = true;
  bool lists_unchanged = false;
};

// Forces from dispatch/retrieve in grove's order: dispatch(k) then retrieve(k - 1). The output
// starts as `initial` (retrieve adds to it).
template <class SPJ>
std::vector<GravityForce> runMultiwalk(user::cuda::GravityMultiwalkInterface<SPJ>& mw, const GravityWalks<SPJ>& g,
                                       const RunOrder& order, const std::vector<GravityForce>& initial = {}) {
  std::vector<GravityForce> forces = initial.empty() ? std::vector<GravityForce>(g.particles()) : initial;
  std::vector<std::size_t> first(static_cast<std::size_t>(g.size()) + 1, 0);
  for (int w = 0; w < g.size(); ++w) first[w + 1] = first[w] + g.epi[w].size();
  std::vector<Batch<SPJ>> batches;
  for (int b = 0; b < g.size(); b += order.walks_per_batch)
    batches.emplace_back(g, b, std::min(g.size(), b + order.walks_per_batch), forces, first);
  auto dispatch = mw.dispatch();
  auto dispatch_plain = mw.dispatchPlain();
  auto retrieve = mw.retrieve();
  for (std::size_t k = 0; k <= batches.size(); ++k) {
    if (k < batches.size()) {
      Batch<SPJ>& b = batches[k];
      const int tag = static_cast<int>(k) % order.tag_max;
      if (order.index_form)
        dispatch(tag, b.size(), b.epi.data(), b.n_epi.data(), b.id_epj.data(), b.n_epj.data(), b.id_spj.data(),
                 b.n_spj.data(), g.epj_all.data(), static_cast<int>(g.epj_all.size()), g.spj_all.data(),
                 static_cast<int>(g.spj_all.size()), k == 0, order.lists_unchanged);
      else
        dispatch_plain(tag, b.size(), b.epi.data(), b.n_epi.data(), b.epj.data(), b.n_epj.data(), b.spj.data(),
                       b.n_spj.data());
    }
    if (k > 0) {
      Batch<SPJ>& b = batches[k - 1];
      retrieve(static_cast<int>(k - 1) % order.tag_max, b.size(), b.n_epi.data(), b.force.data());
    }
  }
  return forces;
}

// ---- comparing forces ----------------------------------------------------------------------------

struct Differences {
  double max_acc = 0, median_acc = 0, max_pot = 0, median_pot = 0;
  int zero_mismatches = 0;  // reference exactly zero (no sources) but the result is not
};

// Per-particle relative differences of got from ref. Results of another count than the references,
// or none at all, fail the calling test here (and every difference comes back NaN, so the
// caller's bounds fail too): comparing a prefix, or nothing, is no comparison.
inline Differences compare(const std::vector<GravityForce>& got, const std::vector<GravityForce>& ref) {
  if (got.size() != ref.size() || ref.empty()) {
    ADD_FAILURE() << "compare: " << got.size() << " results against " << ref.size() << " references";
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    return {kNaN, kNaN, kNaN, kNaN, static_cast<int>(std::max(got.size(), ref.size()))};
  }
  std::vector<double> acc, pot;
  Differences d;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const grove::Vec3d a(got[i].acc), r(ref[i].acc);
    if (grove::norm2(r) == 0.0 && ref[i].pot == 0.0f) {
      d.zero_mismatches += (grove::norm2(a) != 0.0 || got[i].pot != 0.0f);
      continue;
    }
    acc.push_back(grove::norm(a - r) / grove::norm(r));
    pot.push_back(std::abs(double(got[i].pot) - double(ref[i].pot)) / std::abs(double(ref[i].pot)));
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  if (!acc.empty()) d.max_acc = *std::max_element(acc.begin(), acc.end());
  if (!pot.empty()) d.max_pot = *std::max_element(pot.begin(), pot.end());
  d.median_acc = median(acc), d.median_pot = median(pot);
  return d;
}

inline bool bitwiseEqual(const std::vector<GravityForce>& a, const std::vector<GravityForce>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(GravityForce)) != 0) return false;
  return true;
}

}  // namespace grove::gpu_testing
