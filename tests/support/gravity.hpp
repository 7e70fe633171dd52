#pragma once
// Double-precision gravity for the tree tests: particle types, kernels for every moment type,
// and the direct-summation reference. Charges may be negative (Coulomb-like tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "support/gravity_arithmetic.hpp"
#include "support/particles.hpp"
#include "support/statistics.hpp"

namespace grove::testing_support {

struct ChargedEP {
  Vec3d pos;
  double charge = 0.0;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getCharge() const { return charge; }
  void copyFromFP(const Charged& c) { pos = c.pos, charge = c.charge; }
};

// acc += q (x_j - x_i) / r^3, pot -= q / r, with Plummer softening; self pairs skipped.
struct DirectKernel {
  template <class Source>
  void operator()(const ChargedEP* epi, int n_i, const Source* src, int n_j, AccPot* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) addPair(Vec3d(src[j].getPos()) - epi[i].pos, src[j].getCharge(), f[i]);
  }
};

struct MultipoleKernel {
  template <class SPJ>
  void operator()(const ChargedEP* epi, int n_i, const SPJ* sp, int n_j, AccPot* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        Vec3d dipole;
        SymMat3d quad;
        if constexpr (requires { sp[j].dipole; }) dipole = sp[j].dipole;
        if constexpr (requires { sp[j].quad; }) quad = sp[j].quad;
        addMultipole(epi[i].pos - sp[j].getPos(), sp[j].getCharge(), dipole, quad, f[i]);
      }
  }
};

// Direct summation over every rank's particles, for this rank's particles (in psys order).
inline std::vector<AccPot> directSummation(const ParticleSystem<Charged>& psys) {
  const auto all = psys.comm().allgatherv(psys.particles());
  std::vector<AccPot> out(psys.size());
  const auto n = static_cast<std::int64_t>(psys.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] = sumOverOthers(psys[static_cast<std::size_t>(i)], all.data(), all.size());
  return out;
}

struct ErrorStats {
  double median = 0, p99 = 0, max = 0;
};

// Relative acceleration errors |a - a_ref| / |a_ref| over all ranks (collective). A rank whose
// results and references differ in count, or an empty sample over all ranks, is a failed test,
// not a pass: the statistics come back NaN, so every bound on them fails too.
inline ErrorStats relativeErrors(const Comm& comm, const std::vector<Vec3d>& acc, const std::vector<AccPot>& ref) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const bool sizes_differ = acc.size() != ref.size();
  if (sizes_differ) ADD_FAILURE() << "relativeErrors: " << acc.size() << " results against " << ref.size() << " references";
  std::vector<double> local(sizes_differ ? 0 : acc.size());
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = norm(acc[i] - ref[i].acc) / norm(ref[i].acc);
  const std::vector<double> all = sortedOverRanks(comm, local);
  if (comm.allreduceMax(sizes_differ ? 1 : 0) != 0) return {kNaN, kNaN, kNaN};
  if (all.empty()) {
    ADD_FAILURE() << "relativeErrors: no particle on any rank, nothing was compared";
    return {kNaN, kNaN, kNaN};
  }
  auto at = [&](double q) { return all[static_cast<std::size_t>(q * static_cast<double>(all.size() - 1))]; };
  return {at(0.5), at(0.99), all.back()};
}

inline Vec3d coldSpherePosition(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Vec3d p;
  do p = {u(rng), u(rng), u(rng)};
  while (norm2(p) >= 1.0);
  return 3.0 * p;
}

// This rank's share of n bodies of total charge 1 (or of charges +-1/n when bipolar).
inline void makeSystem(ParticleSystem<Charged>& psys, std::int64_t n, bool plummer_sphere, bool bipolar = false,
                       std::uint64_t seed = 42) {
  const int r = psys.comm().rank(), p = psys.comm().size();
  const std::int64_t begin = n * r / p, end = n * (r + 1) / p;
  psys.resize(0);
  for (std::int64_t id = begin; id < end; ++id) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(id));
    Charged c;
    c.id = id;
    c.pos = plummer_sphere ? plummer(rng) : coldSpherePosition(rng);
    c.charge = bipolar ? ((id % 2) ? 1.0 : -1.0) / static_cast<double>(n) : 1.0 / static_cast<double>(n);
    if (bipolar) c.pos.x += (id % 2) ? 0.3 : -0.3;  // separated charges: a strong dipole
    psys.add(c);
  }
}

// This rank's share of a bar [0, P) x [0, 0.1) x [0, 0.1) of P = comm size units, per_unit
// bodies of total charge 1 in each unit, dealt to ranks round robin (so that the first exchange
// moves most of them). Cut into P slabs, every rank has the same few neighbours whatever P is.
inline void makeBar(ParticleSystem<Charged>& psys, std::int64_t per_unit) {
  const int ranks = psys.comm().size();
  const std::int64_t n = per_unit * ranks;
  for (std::int64_t id = psys.comm().rank(); id < n; id += ranks) {
    std::mt19937_64 rng(977 * static_cast<std::uint64_t>(id) + 5);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Charged c;
    c.id = id;
    c.charge = 1.0 / static_cast<double>(n);
    c.pos = {static_cast<double>(id % ranks) + u(rng), 0.1 * u(rng), 0.1 * u(rng)};
    psys.add(c);
  }
}

// A decomposed system and its reference forces, made once per configuration: makeSystem's bodies,
// decomposed and exchanged, and kReference(psys) (a direct summation) for them.
struct PreparedSystem {
  ParticleSystem<Charged> psys;
  DomainInfo dinfo;
  std::vector<AccPot> direct;
};

template <auto kReference>
PreparedSystem& preparedSystem(std::int64_t n, bool plummer_sphere, bool bipolar = false) {
  static std::map<std::tuple<std::int64_t, bool, bool>, PreparedSystem> cache;  // one per reference
  auto [it, fresh] = cache.try_emplace({n, plummer_sphere, bipolar});
  PreparedSystem& p = it->second;
  if (fresh) {
    makeSystem(p.psys, n, plummer_sphere, bipolar);
    p.dinfo.decomposeDomainAll(p.psys);
    p.psys.exchangeParticle(p.dinfo);
    p.direct = kReference(p.psys);
  }
  return p;
}

}  // namespace grove::testing_support
