// exchangeParticle against brute force: the multiset of particles (ids and payloads) is the
// same before and after, and every particle ends in the box of the rank that holds it.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "support/particles.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

using Psys = ParticleSystem<TestParticle>;

// Every rank's particles, on every rank, sorted by id.
std::vector<TestParticle> everyParticleSortedById(const Psys& psys) {
  auto all = psys.comm().allgatherv(psys.particles());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return all;
}

void expectSameParticles(const std::vector<TestParticle>& before, const std::vector<TestParticle>& after) {
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    ASSERT_EQ(before[i].id, after[i].id);
    ASSERT_EQ(before[i].pos, after[i].pos) << "particle " << before[i].id;
    ASSERT_TRUE(payloadMatchesId(after[i])) << "particle " << after[i].id;
  }
}

void expectEveryParticleInsideItsRanksDomain(const Psys& psys, const DomainInfo& dinfo) {
  const Boxd& mine = dinfo.getPosDomain(psys.comm().rank());
  for (const auto& p : psys)
    ASSERT_TRUE(mine.contains(p.pos)) << "particle " << p.id << " at " << fmt::format("{}", p.pos)
                                      << " is not inside rank " << psys.comm().rank() << "'s domain "
                                      << fmt::format("{}", mine);
}

// Fills psys with particles made by `place(global_index)`, given as global index ranges per rank.
void fill(Psys& psys, std::int64_t first_id, std::int64_t count, const std::function<Vec3d(std::int64_t)>& place) {
  psys.resize(0);
  for (std::int64_t i = 0; i < count; ++i) psys.add(makeParticle(first_id + i, place(first_id + i)));
}

void fillShareOfN(Psys& psys, std::int64_t n_total, const std::function<Vec3d(std::int64_t)>& place) {
  const int r = psys.comm().rank(), p = psys.comm().size();
  const std::int64_t begin = n_total * r / p, end = n_total * (r + 1) / p;
  fill(psys, begin, end - begin, place);
}

class ExchangeConserves : public ::testing::TestWithParam<DecompositionMethod> {
 protected:
  // Decomposes, exchanges, and checks conservation and containment.
  void decomposeExchangeAndCheck(Psys& psys, DomainInfo& dinfo) {
    const auto before = everyParticleSortedById(psys);
    dinfo.decomposeDomainAll(psys);
    psys.exchangeParticle(dinfo);
    expectSameParticles(before, everyParticleSortedById(psys));
    expectEveryParticleInsideItsRanksDomain(psys, dinfo);
  }
  DomainInfo makeDomainInfo() {
    DomainInfo dinfo;
    dinfo.setDecompositionMethod(GetParam());
    return dinfo;
  }
};

Vec3d hashedUniform(std::int64_t i) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(i) * 2654435761u + 17);
  return uniformInCube(rng);
}
Vec3d hashedPlummer(std::int64_t i) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(i) * 2654435761u + 99);
  return plummer(rng);
}

}  // namespace

TEST_P(ExchangeConserves, UniformCube) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  fillShareOfN(psys, 20000, hashedUniform);
  decomposeExchangeAndCheck(psys, dinfo);
}

TEST_P(ExchangeConserves, PlummerSphere) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  fillShareOfN(psys, 20000, hashedPlummer);
  decomposeExchangeAndCheck(psys, dinfo);
}

TEST_P(ExchangeConserves, AllParticlesStartOnRankZero) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  if (psys.comm().rank() == 0) fill(psys, 0, 10000, hashedUniform);
  decomposeExchangeAndCheck(psys, dinfo);
  // The decomposition spreads them: with more than one rank, rank 0 no longer holds them all.
  if (psys.comm().size() > 1) EXPECT_LT(psys.comm().allreduceMax<GlobalCount>(psys.size()), 10000);
}

TEST_P(ExchangeConserves, OneRankHasNoParticles) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  const int empty_rank = psys.comm().size() - 1;
  if (psys.comm().rank() != empty_rank) fill(psys, psys.comm().rank() * 5000, 5000, hashedPlummer);
  decomposeExchangeAndCheck(psys, dinfo);
}

TEST_P(ExchangeConserves, ParticlesExactlyOnDomainBoundaries) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  fillShareOfN(psys, 8000, hashedUniform);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  // Now place particles exactly on every face and corner of every domain box (finite ones).
  std::vector<Vec3d> on_faces;
  for (const Boxd& b : dinfo.domainBoxes()) {
    const Vec3d c = b.center();
    for (std::size_t a = 0; a < 3; ++a) {
      for (double face : {b.low[a], b.high[a]}) {
        if (!std::isfinite(face)) continue;
        Vec3d p = {std::isfinite(c.x) ? c.x : 0.5, std::isfinite(c.y) ? c.y : 0.5, std::isfinite(c.z) ? c.z : 0.5};
        p[a] = face;
        on_faces.push_back(p);
      }
    }
    if (isFinite(b.low)) on_faces.push_back(b.low);
  }
  const std::int64_t base = 1'000'000 + 100'000 * psys.comm().rank();
  for (std::size_t i = 0; i < on_faces.size(); ++i)
    psys.add(makeParticle(base + static_cast<std::int64_t>(i), on_faces[i]));
  const auto before = everyParticleSortedById(psys);
  psys.exchangeParticle(dinfo);
  expectSameParticles(before, everyParticleSortedById(psys));
  expectEveryParticleInsideItsRanksDomain(psys, dinfo);
}

TEST_P(ExchangeConserves, AThousandParticlesAtOnePosition) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  fillShareOfN(psys, 1000, [](std::int64_t) { return Vec3d{0.25, -3.0, 7.5}; });
  decomposeExchangeAndCheck(psys, dinfo);
  // They cannot be separated: exactly one rank holds all of them.
  const GlobalCount holders = psys.comm().allreduceSum<GlobalCount>(psys.empty() ? 0 : 1);
  EXPECT_EQ(holders, 1);
}

TEST_P(ExchangeConserves, FewerParticlesThanRanks) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  if (psys.comm().rank() == 0) fill(psys, 0, std::max(1, psys.comm().size() - 1), hashedUniform);
  decomposeExchangeAndCheck(psys, dinfo);
}

TEST_P(ExchangeConserves, RepeatedStepsWithMotionKeepEveryParticle) {
  Psys psys;
  DomainInfo dinfo = makeDomainInfo();
  dinfo.initialize(0.3);
  fillShareOfN(psys, 6000, hashedPlummer);
  const auto initial = everyParticleSortedById(psys);
  for (int step = 0; step < 4; ++step) {
    for (auto& p : psys) p.pos += Vec3d{0.05, -0.02, 0.01} * static_cast<double>(1 + p.id % 3);
    dinfo.decomposeDomainAll(psys);
    psys.exchangeParticle(dinfo);
    expectEveryParticleInsideItsRanksDomain(psys, dinfo);
  }
  const auto final_state = everyParticleSortedById(psys);
  ASSERT_EQ(final_state.size(), initial.size());
  for (std::size_t i = 0; i < initial.size(); ++i) {
    ASSERT_EQ(final_state[i].id, initial[i].id);
    ASSERT_TRUE(payloadMatchesId(final_state[i]));
  }
}

TEST_P(ExchangeConserves, PeriodicWrapAroundMovesParticlesByWholePeriods) {
  for (BoundaryCondition bc : {BoundaryCondition::PERIODIC_X, BoundaryCondition::PERIODIC_XY,
                               BoundaryCondition::PERIODIC_YZ, BoundaryCondition::PERIODIC_XYZ}) {
    Psys psys;
    DomainInfo dinfo = makeDomainInfo();
    dinfo.setBoundaryCondition(bc);
    dinfo.setPosRootDomain({0, 0, 0}, {1, 2, 4});
    // Start outside the root along periodic axes (by up to 3 periods), and on the upper face.
    fillShareOfN(psys, 6000, [&](std::int64_t i) {
      Vec3d p = hashedUniform(i);
      p = {p.x, 2 * p.y, 4 * p.z};
      const double shift = static_cast<double>(i % 7) - 3.0;
      if (isPeriodic(bc, 0)) p.x += shift;
      if (isPeriodic(bc, 1)) p.y += 2 * shift;
      if (isPeriodic(bc, 2)) p.z += 4 * shift;
      if (i % 101 == 0 && isPeriodic(bc, 0)) p.x = 1.0;
      return p;
    });
    const auto unwrapped = everyParticleSortedById(psys);
    psys.adjustPositionIntoRootDomain(dinfo);
    dinfo.decomposeDomainAll(psys);
    psys.exchangeParticle(dinfo);
    expectEveryParticleInsideItsRanksDomain(psys, dinfo);
    const auto wrapped = everyParticleSortedById(psys);
    ASSERT_EQ(wrapped.size(), unwrapped.size());
    const Vec3d period{1, 2, 4};
    for (std::size_t i = 0; i < wrapped.size(); ++i) {
      ASSERT_EQ(wrapped[i].id, unwrapped[i].id);
      ASSERT_TRUE(dinfo.getPosRootDomain().contains(wrapped[i].pos));
      for (std::size_t a = 0; a < 3; ++a) {
        const double moved_periods = (unwrapped[i].pos[a] - wrapped[i].pos[a]) / period[a];
        if (isPeriodic(bc, static_cast<int>(a)))
          EXPECT_NEAR(moved_periods, std::round(moved_periods), 1e-9) << "axis " << a;
        else
          EXPECT_EQ(moved_periods, 0.0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothMethods, ExchangeConserves,
                         ::testing::Values(DecompositionMethod::MULTISECTION, DecompositionMethod::ORB),
                         [](const auto& info) {
                           return info.param == DecompositionMethod::ORB ? std::string("Orb")
                                                                         : std::string("Multisection");
                         });
