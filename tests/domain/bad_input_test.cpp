// Bad input: a clear grove::Error on every rank, naming the rank and the particle, with nothing
// lost or moved. ctest also runs this suite built with -ffast-math (library included), where the
// compiler assumes no value is NaN or infinite: the checks and the messages must hold there too.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "support/gravity.hpp"
#include "support/particles.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

using Psys = ParticleSystem<TestParticle>;

void fillUniform(Psys& psys, int n) {
  std::mt19937_64 rng(100 + static_cast<std::uint64_t>(psys.comm().rank()));
  for (int i = 0; i < n; ++i) psys.add(makeParticle(psys.comm().rank() * n + i, uniformInCube(rng)));
}

// Runs `action` on every rank, expecting grove::Error everywhere. On the bad rank the message
// must contain each of `needles`; elsewhere it must name the bad rank.
template <class Action>
void expectErrorOnEveryRank(const Comm& comm, int bad_rank, Action action, std::vector<std::string> needles) {
  std::string message;
  try {
    action();
    ADD_FAILURE() << "no grove::Error on rank " << comm.rank();
  } catch (const Error& e) {
    message = e.what();
  }
  if (comm.rank() == bad_rank) {
    needles.push_back(fmt::format("rank {}", bad_rank));
    for (const auto& needle : needles) EXPECT_NE(message.find(needle), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find(fmt::format("rank {} found bad input", bad_rank)), std::string::npos) << message;
  }
}

std::vector<TestParticle> snapshot(const Psys& psys) { return {psys.begin(), psys.end()}; }

void expectUnchanged(const std::vector<TestParticle>& before, const Psys& psys) {
  ASSERT_EQ(before.size(), psys.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].id, psys[i].id);
    EXPECT_EQ(std::memcmp(&before[i].pos, &psys[i].pos, sizeof(Vec3d)), 0) << "particle " << i << " moved";
  }
}

}  // namespace

TEST(BadInput, NanPositionIsNamedAndNothingMoves) {
  Psys psys;
  DomainInfo dinfo;
  fillUniform(psys, 200);
  dinfo.decomposeDomainAll(psys);
  const int bad_rank = psys.comm().size() - 1;
  if (psys.comm().rank() == bad_rank) psys[37].pos.y = std::numeric_limits<double>::quiet_NaN();
  const auto before = snapshot(psys);
  expectErrorOnEveryRank(psys.comm(), bad_rank, [&] { psys.exchangeParticle(dinfo); },
                         {"particle 37", "non-finite", "exchangeParticle", "nan"});
  expectUnchanged(before, psys);
}

TEST(BadInput, InfinitePositionIsNamed) {
  Psys psys;
  DomainInfo dinfo;
  fillUniform(psys, 50);
  dinfo.decomposeDomainAll(psys);
  const int bad_rank = 0;
  if (psys.comm().rank() == bad_rank) psys[3].pos.z = -std::numeric_limits<double>::infinity();
  expectErrorOnEveryRank(psys.comm(), bad_rank, [&] { psys.exchangeParticle(dinfo); },
                         {"particle 3", "non-finite", "-inf"});
}

TEST(BadInput, NanPositionInSamplingIsNamed) {
  Psys psys;
  DomainInfo dinfo;
  fillUniform(psys, 10);  // 10 < 1000 samples per rank: every particle is sampled
  const int bad_rank = psys.comm().size() / 2;
  if (psys.comm().rank() == bad_rank) psys[4].pos.x = std::numeric_limits<double>::quiet_NaN();
  expectErrorOnEveryRank(psys.comm(), bad_rank, [&] { dinfo.decomposeDomainAll(psys); },
                         {"particle 4", "collectSampleParticle", "nan"});
}

TEST(BadInput, ParticleOutsideAFixedOpenRootIsNamed) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fillUniform(psys, 100);
  dinfo.decomposeDomainAll(psys);
  const int bad_rank = psys.comm().size() - 1;
  if (psys.comm().rank() == bad_rank) psys[99].pos.x = 1.5;
  const auto before = snapshot(psys);
  expectErrorOnEveryRank(psys.comm(), bad_rank, [&] { psys.exchangeParticle(dinfo); },
                         {"particle 99", "outside the fixed root domain"});
  expectUnchanged(before, psys);
}

TEST(BadInput, ParticleOutsideAPeriodicRootAsksForAdjustment) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fillUniform(psys, 100);
  dinfo.decomposeDomainAll(psys);
  if (psys.comm().rank() == 0) psys[12].pos.z = -0.25;
  expectErrorOnEveryRank(psys.comm(), 0, [&] { psys.exchangeParticle(dinfo); },
                         {"particle 12", "adjustPositionIntoRootDomain"});
}

TEST(BadInput, PeriodicBoundaryWithoutRootDomainIsAnError) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_X);
  fillUniform(psys, 10);
  EXPECT_THROW(dinfo.decomposeDomainAll(psys), Error);
  EXPECT_THROW(psys.adjustPositionIntoRootDomain(dinfo), Error);
}

TEST(BadInput, NegativeOrNanWeightIsAnError) {
  Psys psys;
  DomainInfo dinfo;
  fillUniform(psys, 10);
  const int bad_rank = psys.comm().size() - 1;
  const double weight = psys.comm().rank() == bad_rank ? -1.0 : 10.0;
  expectErrorOnEveryRank(psys.comm(), bad_rank, [&] { dinfo.decomposeDomainAll(psys, weight); },
                         {"weight", "-1"});
}

TEST(BadInput, NanAndInfiniteWeightsAreNamed) {
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Psys psys;
    DomainInfo dinfo;
    fillUniform(psys, 10);
    const int bad_rank = 0;
    const double weight = psys.comm().rank() == bad_rank ? bad : 10.0;
    expectErrorOnEveryRank(psys.comm(), bad_rank, [&] { dinfo.decomposeDomainAll(psys, weight); },
                           {"weight", isNanValue(bad) ? "nan" : "inf"});
  }
}

TEST(BadInput, NonFiniteRootDomainAndThetaAreRejectedWithTheirValues) {
  DomainInfo dinfo;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto messageOf = [](auto&& action) {
    try {
      action();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string root_nan = messageOf([&] { dinfo.setPosRootDomain({0, nan, 0}, {1, 1, 1}); });
  EXPECT_NE(root_nan.find("setPosRootDomain"), std::string::npos) << root_nan;
  EXPECT_NE(root_nan.find("nan"), std::string::npos) << root_nan;
  const std::string root_inf = messageOf([&] { dinfo.setPosRootDomain({0, 0, 0}, {1, 1, inf}); });
  EXPECT_NE(root_inf.find("inf"), std::string::npos) << root_inf;
  using Tree = TreeForForceLong<AccPot, ChargedEP, ChargedEP>::Monopole;
  const std::string theta_nan = messageOf([&] { Tree tree(10, nan, 8, 64); });
  EXPECT_NE(theta_nan.find("theta"), std::string::npos) << theta_nan;
  EXPECT_NE(theta_nan.find("nan"), std::string::npos) << theta_nan;
}

// The formatting of non-finite values itself, with format specifications, under the suite's flags.
TEST(BadInput, NonFiniteValuesFormatByNameWithAnySpecification) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(isFiniteValue(nan));
  EXPECT_FALSE(isFiniteValue(-inf));
  EXPECT_FALSE(isFiniteValue(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_TRUE(isFiniteValue(std::numeric_limits<double>::max()));
  EXPECT_TRUE(isFiniteValue(std::numeric_limits<double>::denorm_min()));
  EXPECT_TRUE(isNanValue(-nan));
  EXPECT_FALSE(isNanValue(inf));
  EXPECT_EQ(formatMessage("{:.3e} {} {:8.2f} {}", nan, -inf, 1.5, 2), "nan -inf     1.50 2");
  EXPECT_EQ(formatMessage("{}", -nan), "-nan");
  EXPECT_EQ(fmt::format("{:.2f}", Vec3d{nan, 0.25, inf}), "(nan, 0.25, inf)");
  EXPECT_EQ(fmt::format("{}", Vec3<float>{1.0f, -std::numeric_limits<float>::infinity(), 2.0f}), "(1, -inf, 2)");
  try {
    require(false, "stage", "value {:.4g} and {}", nan, Vec3d{0, nan, 1});
    ADD_FAILURE() << "require(false) did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value nan and (0, nan, 1)"), std::string::npos) << e.what();
  }
}

TEST(BadInput, WrongMultisectionGridAndSettingsAreRejected) {
  DomainInfo dinfo;
  const int p = dinfo.rankCount();
  EXPECT_THROW(dinfo.setNumberOfDomainMultiDimension(p + 1, 1, 1), Error);
  EXPECT_THROW(dinfo.setNumberOfDomainMultiDimension(0, p, 1), Error);
  EXPECT_THROW(dinfo.initialize(0.0), Error);
  EXPECT_THROW(dinfo.initialize(1.5), Error);
  EXPECT_THROW(dinfo.setPosRootDomain({0, 0, 0}, {1, 0, 1}), Error);
  EXPECT_THROW(dinfo.setSampleCountPerRank(0), Error);
}

TEST(BadInput, RemoveWithAnIndexOutOfRangeRemovesNothing) {
  Psys psys;
  fillUniform(psys, 10);
  const LocalIndex bad[] = {2, 10};
  EXPECT_THROW(psys.remove(bad), Error);
  EXPECT_EQ(psys.size(), 10u);
  const LocalIndex good[] = {9, 2, 2, 0};
  psys.remove(good);
  ASSERT_EQ(psys.size(), 7u);
  EXPECT_EQ(psys[0].id, psys.comm().rank() * 10 + 1);
  EXPECT_EQ(psys[1].id, psys.comm().rank() * 10 + 3);
}

TEST(BadInput, AdjustWithNanPositionNamesTheParticle) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fillUniform(psys, 10);
  psys[6].pos.x = std::numeric_limits<double>::quiet_NaN();
  try {
    psys.adjustPositionIntoRootDomain(dinfo);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("particle 6"), std::string::npos) << e.what();
  }
}
