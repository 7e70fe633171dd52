// DomainInfo across ranks: balance, weighted sampling, ownership against brute force, smoothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "support/particles.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

using Psys = ParticleSystem<TestParticle>;

void fillShare(Psys& psys, std::int64_t n_total, std::uint64_t seed, bool use_plummer) {
  const int r = psys.comm().rank(), p = psys.comm().size();
  const std::int64_t begin = n_total * r / p, end = n_total * (r + 1) / p;
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(r));
  psys.resize(0);
  for (std::int64_t i = begin; i < end; ++i) psys.add(makeParticle(i, use_plummer ? plummer(rng) : uniformInCube(rng)));
}

class DomainBalance : public ::testing::TestWithParam<std::tuple<DecompositionMethod, bool>> {};

}  // namespace

// N = 10^5 with equal weights and the default 1000 samples per rank: no rank holds more than
// 10% above the mean.
TEST_P(DomainBalance, EqualWeightsBalanceParticleCountsWithinTenPercent) {
  const auto [method, use_plummer] = GetParam();
  Psys psys;
  DomainInfo dinfo;
  dinfo.setDecompositionMethod(method);
  fillShare(psys, 100000, 2024, use_plummer);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  const auto counts = psys.comm().allgather(static_cast<GlobalCount>(psys.size()));
  const double mean = 100000.0 / psys.comm().size();
  const double worst = static_cast<double>(*std::max_element(counts.begin(), counts.end()));
  EXPECT_LE(worst / mean, 1.10) << "max " << worst << " mean " << mean;
  EXPECT_EQ(dinfo.getSampleCountPerRank(), DomainInfo::kDefaultSamplesPerRank);
}

INSTANTIATE_TEST_SUITE_P(MethodsAndShapes, DomainBalance,
                         ::testing::Combine(::testing::Values(DecompositionMethod::MULTISECTION,
                                                              DecompositionMethod::ORB),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == DecompositionMethod::ORB ? "Orb"
                                                                                                  : "Multisection") +
                                  (std::get<1>(info.param) ? "Plummer" : "Uniform");
                         });

// Rank r holds the slab r/P <= x < (r+1)/P, and its particles cost r+1 each (weight = cost).
// Sample counts must follow the weights, and the new domains must share the work, not the
// particle count, evenly.
TEST(DomainWeights, SampleAllocationAndDomainsFollowUnequalWeights) {
  for (DecompositionMethod method : {DecompositionMethod::MULTISECTION, DecompositionMethod::ORB}) {
    Psys psys;
    DomainInfo dinfo;
    dinfo.setDecompositionMethod(method);
    const int r = psys.comm().rank(), p = psys.comm().size();
    const std::int64_t n_per_rank = 20000;
    std::mt19937_64 rng(77 + static_cast<std::uint64_t>(r));
    for (std::int64_t i = 0; i < n_per_rank; ++i) {
      Vec3d pos = uniformInCube(rng);
      pos.x = (r + pos.x) / p;
      psys.add(makeParticle(r * n_per_rank + i, pos));
    }
    const double cost_per_particle = r + 1;
    dinfo.decomposeDomainAll(psys, cost_per_particle * static_cast<double>(n_per_rank));

    const double expected_samples = std::round(2000.0 * (r + 1) / (p + 1));  // 1000 p (r+1) / (p (p+1) / 2)
    EXPECT_EQ(static_cast<double>(dinfo.getSampleCountLocal()), expected_samples);

    psys.exchangeParticle(dinfo);
    double my_work = 0;
    for (const auto& particle : psys) my_work += static_cast<double>(particle.id / n_per_rank + 1);
    const auto work = psys.comm().allgather(my_work);
    const double mean = n_per_rank * (p + 1) / 2.0;
    EXPECT_LE(*std::max_element(work.begin(), work.end()) / mean, 1.10);
  }
}

TEST(DomainOwnership, WhichRankAgreesWithBruteForceOverTheBoxes) {
  for (DecompositionMethod method : {DecompositionMethod::MULTISECTION, DecompositionMethod::ORB}) {
    Psys psys;
    DomainInfo dinfo;
    dinfo.setDecompositionMethod(method);
    fillShare(psys, 20000, 5, true);
    dinfo.decomposeDomainAll(psys);
    std::mt19937_64 rng(11);
    for (int i = 0; i < 5000; ++i) {
      const Vec3d pos = 3.0 * plummer(rng);
      int holders = 0, holder = -1;
      for (int r = 0; r < dinfo.rankCount(); ++r)
        if (dinfo.getPosDomain(r).contains(pos)) ++holders, holder = r;
      ASSERT_EQ(holders, 1);
      ASSERT_EQ(dinfo.whichRank(pos), holder);
    }
  }
}

TEST(DomainOwnership, BoxesTileAFixedPeriodicRootExactly) {
  for (DecompositionMethod method : {DecompositionMethod::MULTISECTION, DecompositionMethod::ORB}) {
    Psys psys;
    DomainInfo dinfo;
    dinfo.setDecompositionMethod(method);
    dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
    dinfo.setPosRootDomain({-1, -1, -1}, {1, 1, 1});
    fillShare(psys, 10000, 8, false);
    for (auto& particle : psys) particle.pos = 2.0 * particle.pos - Vec3d(1.0);
    dinfo.decomposeDomainAll(psys);
    double volume = 0;
    for (const Boxd& b : dinfo.domainBoxes()) {
      const Vec3d s = b.size();
      ASSERT_TRUE(isFinite(s));
      ASSERT_GE(s.x, 0.0);
      volume += s.x * s.y * s.z;
      for (std::size_t a = 0; a < 3; ++a) {
        EXPECT_GE(b.low[a], -1.0);
        EXPECT_LE(b.high[a], 1.0);
      }
    }
    EXPECT_NEAR(volume, 8.0, 1e-12);
  }
}

TEST(DomainMultisection, UserGridIsUsedAndAutomaticGridMultipliesToTheRankCount) {
  Psys psys;
  fillShare(psys, 4000, 3, false);
  DomainInfo automatic;
  automatic.decomposeDomainAll(psys);
  const auto g = automatic.getNumberOfDomainMultiDimension();
  EXPECT_EQ(g[0] * g[1] * g[2], psys.comm().size());

  DomainInfo user;
  user.setNumberOfDomainMultiDimension(1, 1, psys.comm().size());
  user.decomposeDomainAll(psys);
  EXPECT_EQ(user.getNumberOfDomainMultiDimension(), (std::array<int, 3>{1, 1, psys.comm().size()}));
  // Only z is cut: every domain spans all of x and y.
  for (const Boxd& b : user.domainBoxes()) {
    EXPECT_EQ(b.low.x, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(b.high.y, std::numeric_limits<double>::infinity());
  }
}

// coef_ema = 0.25: after moving every particle by +0.2 in x, the cuts move by a quarter of
// what an unsmoothed decomposition moves them.
TEST(DomainSmoothing, CoefEmaBlendsNewCutsWithPreviousOnes) {
  Psys psys;
  fillShare(psys, 40000, 21, false);
  DomainInfo smooth, sharp;
  smooth.initialize(0.25);
  smooth.setNumberOfDomainMultiDimension(psys.comm().size(), 1, 1);
  sharp.setNumberOfDomainMultiDimension(psys.comm().size(), 1, 1);
  smooth.decomposeDomainAll(psys);
  sharp.decomposeDomainAll(psys);
  std::vector<double> first_cuts;
  for (const Boxd& b : sharp.domainBoxes()) first_cuts.push_back(b.high.x);
  for (auto& particle : psys) particle.pos.x += 0.2;
  smooth.decomposeDomainAll(psys);
  sharp.decomposeDomainAll(psys);
  for (int r = 0; r + 1 < psys.comm().size(); ++r) {
    const double smooth_cut = smooth.getPosDomain(r).high.x, sharp_cut = sharp.getPosDomain(r).high.x;
    EXPECT_NEAR(smooth_cut, 0.25 * sharp_cut + 0.75 * first_cuts[static_cast<std::size_t>(r)], 1e-12);
    EXPECT_GT(sharp_cut - first_cuts[static_cast<std::size_t>(r)], 0.15);
  }
}

// Cuts found elsewhere (as the GPU's counting decomposition finds them) become the domains;
// cuts that do not give every rank exactly one box are refused with the rank named.
TEST(DomainAdoptedCuts, BecomeTheDomainsAndBadShapesAreRefused) {
  DomainInfo dinfo;
  const int ranks = dinfo.rankCount();
  CutTree slabs;  // x slabs at k / ranks
  slabs.nodes.push_back({0, 1, ranks, 0, -1});
  for (int r = 0; r < ranks; ++r) slabs.nodes.push_back({-1, -1, 0, -1, r});
  for (int k = 1; k < ranks; ++k) slabs.cuts.push_back(static_cast<double>(k) / ranks);
  CutTree twice = slabs;
  twice.nodes.back().rank = 0;  // rank 0 owns two boxes (with one rank: still one, and valid)
  const std::int64_t count = dinfo.decompositionCount();
  dinfo.adoptCuts(slabs);
  EXPECT_EQ(dinfo.decompositionCount(), count + 1);
  for (int r = 0; r < ranks; ++r) {
    const Boxd box = dinfo.getPosDomain(r);
    if (r > 0) EXPECT_DOUBLE_EQ(box.low.x, static_cast<double>(r) / ranks);
    if (r + 1 < ranks) EXPECT_DOUBLE_EQ(box.high.x, static_cast<double>(r + 1) / ranks);
    EXPECT_EQ(dinfo.whichRank(Vec3d((r + 0.5) / ranks, 0.3, -2.0)), r);
  }
  if (ranks > 1) {
    try {
      dinfo.adoptCuts(twice);
      ADD_FAILURE() << "cuts giving rank 0 two boxes were adopted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank 0 owns 2 leaves"), std::string::npos) << e.what();
    }
    EXPECT_EQ(dinfo.getPosDomain(ranks - 1).low.x, static_cast<double>(ranks - 1) / ranks);  // unchanged
  }
}
