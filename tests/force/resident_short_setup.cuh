#pragma once
// The particle types, generators and brute-force references the resident short-range suites
// share (nvcc only): the one-rank suite (resident_short_test.cu) and the multi-rank one
// (resident_short_exchange_test.cu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "grove/domain/domain_info.hpp"
#include "grove/domain/periodic_wrap.hpp"
#include "grove/force/resident_tree_short.cuh"

namespace resident_short_test {

using grove::Vec3d;
using grove::SearchMode;

// What the kernels compute of a particle's neighbours.
struct NeighbourSums {
  std::int32_t count = 0;
  double weight = 0;   // sum of w_j (r / r_i)^2 ... any smooth function of the pair
  Vec3d offset;        // sum of x_j (image) - x_i
  std::int64_t id_sum = 0;
};

struct Particle {
  std::int64_t id = 0;
  Vec3d pos;
  double r = 0, w = 1;
  NeighbourSums found;
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void copyFromForce(const NeighbourSums& f) { found = f; }
};

struct EP {
  std::int64_t id = 0;
  Vec3d pos;
  double r = 0, w = 1;
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  GROVE_HOST_DEVICE double getRSearch() const { return r; }
  GROVE_HOST_DEVICE void copyFromFP(const Particle& p) { id = p.id, pos = p.pos, r = p.r, w = p.w; }
};

__host__ __device__ inline void addPair(const EP& i, const EP& j, NeighbourSums& s) {
  const Vec3d d = j.pos - i.pos;
  s.count += 1;
  s.weight += j.w * (d.x * d.x + d.y * d.y + d.z * d.z) / (i.r * i.r);
  s.offset += d;
  s.id_sum += j.id;
}

struct PairKernel {
  __device__ void operator()(const EP& i, const EP& j, NeighbourSums& s) const { addPair(i, j, s); }
};

// Walks the set twice (as an h iteration does): the second walk's sums are kept, the first's
// count must agree.
struct SetKernel {
  __device__ void operator()(const EP& i, const grove::gpu::NeighbourSet<EP>& set, NeighbourSums& s) const {
    int first = 0;
    for (int k = 0; k < set.size(); ++k) first += set[k].id >= 0;
    for (int k = 0; k < set.size(); ++k) addPair(i, set[k], s);
    if (first != s.count) s.count = -1;
  }
};

// The same sums through NeighbourSet::reduce (withCooperativeNeighbourSets: 1-8 threads per
// particle): folds that count (every thread must see the first thread's count), then the sums.
struct AddSums {
  __device__ NeighbourSums operator()(NeighbourSums a, const NeighbourSums& b) const {
    a.count += b.count, a.weight += b.weight, a.offset += b.offset, a.id_sum += b.id_sum;
    return a;
  }
};
struct ReducingSetKernel {
  __device__ void operator()(const EP& i, const grove::gpu::NeighbourSet<EP>& set, NeighbourSums& s) const {
    const int count = set.reduce(0, [](const EP&) { return 1; }, [](int a, int b) { return a + b; });
    // Every thread must hold the first thread's count: a fold of it over the set gives count^2
    // only then; and a loop whose trips follow the count (as an h iteration's) must not part them.
    const long long square =
        set.reduce(0LL, [&](const EP&) { return static_cast<long long>(count); }, [](long long a, long long b) {
          return a + b;
        });
    int again = 0;
    for (int trip = 0; trip < count % 3 + 1; ++trip)
      again = set.reduce(0, [](const EP&) { return 1; }, [](int a, int b) { return a + b; });
    s = set.reduce(
        NeighbourSums{},
        [&](const EP& j) {
          NeighbourSums one;
          addPair(i, j, one);
          return one;
        },
        AddSums{});
    if (count != s.count || square != static_cast<long long>(count) * count || again != count) s.count = -1;
  }
};

template <SearchMode M>
using Tree = grove::gpu::ResidentTreeShort<NeighbourSums, EP, EP, M>;

// The pairwise kernel for lists with a skin (supersets): only pairs within the mode's radius.
template <SearchMode M>
struct FilteredPairKernel {
  __device__ void operator()(const EP& i, const EP& j, NeighbourSums& s) const {
    const Vec3d d = j.pos - i.pos;
    const double r = M == SearchMode::GATHER ? i.r : M == SearchMode::SCATTER ? j.r : (i.r > j.r ? i.r : j.r);
    if (d.x * d.x + d.y * d.y + d.z * d.z < r * r) addPair(i, j, s);
  }
};

// Moves every particle by up to `amplitude` per axis (a hash of its id and `salt`), wrapped into
// the unit box on its periodic axes: the same on host and device.
struct Jitter {
  double amplitude;
  std::uint64_t salt;
  grove::WrapIntoRootDomain wrap;
  GROVE_HOST_DEVICE static double unit(std::uint64_t h) {  // in [-1, 1)
    h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull, h ^= h >> 33;
    return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
  GROVE_HOST_DEVICE void operator()(Particle& p) const {
    const auto id = static_cast<std::uint64_t>(p.id) * 3 + salt * 0x9e3779b97f4a7c15ull;
    p.pos = wrap(Vec3d{p.pos.x + amplitude * unit(id), p.pos.y + amplitude * unit(id + 1),
                       p.pos.z + amplitude * unit(id + 2)});
  }
};

// Radii r0 * 30^u, u uniform in [0, 1): spanning 30x.
inline std::vector<Particle> makeParticles(std::size_t n, bool clustered, double r0, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.06);
  std::vector<Vec3d> centres;
  for (int c = 0; c < 6; ++c) centres.push_back({u(rng), u(rng), u(rng)});
  std::vector<Particle> p(n);
  for (std::size_t k = 0; k < n; ++k) {
    p[k].id = static_cast<std::int64_t>(k);
    if (clustered && k % 4 != 0) {
      const Vec3d& c = centres[k % centres.size()];
      Vec3d x{c.x + g(rng), c.y + g(rng), c.z + g(rng)};
      for (double* a : {&x.x, &x.y, &x.z}) *a -= std::floor(*a);  // wrapped into [0, 1)
      p[k].pos = x;
    } else {
      p[k].pos = {u(rng), u(rng), u(rng)};
    }
    p[k].r = r0 * std::pow(30.0, u(rng));
    p[k].w = 0.5 + u(rng);
  }
  return p;
}

inline grove::DomainInfo unitBox(grove::BoundaryCondition bc) {
  grove::DomainInfo dinfo;
  dinfo.setBoundaryCondition(bc);
  dinfo.setPosRootDomain({0.0, 0.0, 0.0}, {1.0, 1.0, 1.0});
  return dinfo;
}

// The brute-force search, plain double arithmetic: x_j - x_i through the nearest image.
inline Vec3d separationOf(const Vec3d& xi, const Vec3d& xj, grove::BoundaryCondition bc) {
  Vec3d d = xj - xi;
  for (int a = 0; a < 3; ++a) {
    if (!grove::isPeriodic(bc, a)) continue;
    double& c = a == 0 ? d.x : a == 1 ? d.y : d.z;
    if (c > 0.5) c -= 1.0;
    else if (c < -0.5) c += 1.0;
  }
  return d;
}

template <SearchMode M>
std::vector<std::vector<std::int64_t>> bruteForce(const std::vector<Particle>& p, grove::BoundaryCondition bc) {
  std::vector<std::vector<std::int64_t>> sets(p.size());
  for (const auto& i : p)
    for (const auto& j : p) {
      const Vec3d d = separationOf(i.pos, j.pos, bc);
      const double r2 = d.x * d.x + d.y * d.y + d.z * d.z;
      const double r = M == SearchMode::GATHER ? i.r : M == SearchMode::SCATTER ? j.r : std::max(i.r, j.r);
      if (r2 < r * r) sets[static_cast<std::size_t>(i.id)].push_back(j.id);
    }
  return sets;
}

// The host's sums over a brute-force set (the image positions as the device hands them over).
inline NeighbourSums hostSums(const Particle& i, const std::vector<std::int64_t>& set, const std::vector<Particle>& by_id,
                       grove::BoundaryCondition bc) {
  EP ei;
  ei.copyFromFP(i);
  NeighbourSums s;
  for (std::int64_t id : set) {
    EP ej;
    ej.copyFromFP(by_id[static_cast<std::size_t>(id)]);
    ej.pos = ei.pos + separationOf(ei.pos, ej.pos, bc);
    addPair(ei, ej, s);
  }
  return s;
}

// The device's sets of this rank's particles, by id (n_ids: the ids span [0, n_ids); the
// particles are in tree order after the build, the lists index the walked j-particles).
template <class T>
std::vector<std::vector<std::int64_t>> deviceSets(const T& tree, std::size_t n_ids = 0) {
  const auto epi = tree.epi().toHost(tree.policy().stream);
  const auto epj = tree.walkedEpjArray().toHost(tree.policy().stream);
  const auto first = tree.neighbourFirst().toHost(tree.policy().stream);
  const auto counts = tree.neighbourCounts().toHost(tree.policy().stream);
  const auto list = tree.neighbourList().toHost(tree.policy().stream);
  std::vector<std::vector<std::int64_t>> sets(std::max(n_ids, epi.size()));
  for (std::size_t i = 0; i < epi.size(); ++i) {
    auto& s = sets[static_cast<std::size_t>(epi[i].id)];
    for (int k = 0; k < counts[i]; ++k)
      s.push_back(epj[static_cast<std::size_t>(list[static_cast<std::size_t>(first[i] + k)])].id);
  }
  return sets;
}

}  // namespace resident_short_test
