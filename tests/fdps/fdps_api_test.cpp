// The FDPS 7.1 compatibility layer (grove/fdps.hpp): Mersenne twisters against the reference
// MT19937, PS::Comm wrappers against values each rank can compute alone, FDPS's value types and
// ParticleSystem's FDPS members.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "grove/fdps.hpp"

namespace PS = grove::fdps;

namespace {

// ---- Mersenne twisters ----------------------------------------------------------------------------

TEST(FdpsMT, FirstOutputOfTheReferenceSeedIsTheReferenceValue) {
  PS::MTTS seeded;
  seeded.init_genrand(5489);
  EXPECT_EQ(seeded.genrand_int32(), 3499211612UL);
  PS::MTTS unseeded;  // the reference code seeds 5489 when none was given
  EXPECT_EQ(unseeded.genrand_int32(), 3499211612UL);
}

TEST(FdpsMT, TenThousandthOutputOfTheDefaultSeed) {
  PS::MTTS mt;
  unsigned long value = 0;
  for (int i = 0; i < 10000; ++i) value = mt.genrand_int32();
  EXPECT_EQ(value, 4123659995UL);
}

TEST(FdpsMT, RealVariantsFollowTheReferenceFormulas) {
  PS::MTTS mt;
  mt.init_genrand(20240601UL);
  std::mt19937 raw(20240601U);
  for (int i = 0; i < 1000; ++i) {
    const unsigned long a = raw() >> 5, b = raw() >> 6;
    const double res53 = (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0);
    ASSERT_EQ(mt.genrand_res53(), res53);
    ASSERT_EQ(mt.genrand_real1(), static_cast<double>(raw()) * (1.0 / 4294967295.0));
    ASSERT_EQ(mt.genrand_real2(), static_cast<double>(raw()) * (1.0 / 4294967296.0));
    ASSERT_EQ(mt.genrand_real3(), (static_cast<double>(raw()) + 0.5) * (1.0 / 4294967296.0));
    ASSERT_EQ(mt.genrand_int31(), static_cast<long>(raw() >> 1));
  }
  PS::MTTS range;
  for (int i = 0; i < 10000; ++i) {
    const double r2 = range.genrand_real2(), r3 = range.genrand_real3(), r53 = range.genrand_res53();
    ASSERT_TRUE(r2 >= 0.0 && r2 < 1.0);
    ASSERT_TRUE(r3 > 0.0 && r3 < 1.0);
    ASSERT_TRUE(r53 >= 0.0 && r53 < 1.0);
  }
}

TEST(FdpsMT, StaticGeneratorSeedsAndResets) {
  PS::MT::init_genrand(5489);
  EXPECT_EQ(PS::MT::genrand_int32(), 3499211612UL);
  PS::MT::init_genrand(7);
  const double a = PS::MT::genrand_res53();
  PS::MT::init_genrand(7);
  EXPECT_EQ(PS::MT::genrand_res53(), a);
  PS::MT::initialize();
  EXPECT_EQ(PS::MT::genrand_int32(), 3499211612UL);
}

// ---- Comm ---------------------------------------------------------------------------------------------

TEST(FdpsComm, RankAndSizeAreGroves) {
  const grove::Comm world;
  EXPECT_EQ(PS::Comm::getRank(), world.rank());
  EXPECT_EQ(PS::Comm::getNumberOfProc(), world.size());
  EXPECT_GE(PS::Comm::getNumberOfThread(), 1);
  EXPECT_EQ(PS::Comm::getThreadNum(), 0);
}

TEST(FdpsComm, SumsMinimaMaxima) {
  const int r = PS::Comm::getRank(), p = PS::Comm::getNumberOfProc();
  EXPECT_EQ(PS::Comm::getSum(r + 1), p * (p + 1) / 2);
  EXPECT_EQ(PS::Comm::getSum(static_cast<PS::S64>(r) << 40), (static_cast<PS::S64>(p) * (p - 1) / 2) << 40);
  EXPECT_EQ(PS::Comm::getSum(0.5), 0.5 * p);
  const PS::F64vec v(1.0, static_cast<double>(r), -2.0);
  EXPECT_EQ(PS::Comm::getSum(v), PS::F64vec(p, p * (p - 1) / 2.0, -2.0 * p));
  const PS::F64mat m(1.0, 2.0, 3.0, static_cast<double>(r), 0.0, -1.0);
  EXPECT_EQ(PS::Comm::getSum(m), PS::F64mat(p, 2.0 * p, 3.0 * p, p * (p - 1) / 2.0, 0.0, -1.0 * p));
  EXPECT_EQ(PS::Comm::getMinValue(10 - r), 10 - (p - 1));
  EXPECT_EQ(PS::Comm::getMaxValue(static_cast<PS::F32>(r) * 0.5f), static_cast<PS::F32>(p - 1) * 0.5f);
  EXPECT_EQ(PS::Comm::getMinValue(PS::F64vec(r, -r, 0.0)), PS::F64vec(0.0, -(p - 1), 0.0));
  EXPECT_EQ(PS::Comm::getMaxValue(PS::F64vec(r, -r, 0.0)), PS::F64vec(p - 1, 0.0, 0.0));
}

TEST(FdpsComm, MinMaxWithTheRankThatHoldsThem) {
  const int r = PS::Comm::getRank(), p = PS::Comm::getNumberOfProc();
  double f = 0.0;
  int at = -1;
  PS::Comm::getMinValue(-static_cast<double>(r), r, f, at);
  EXPECT_EQ(f, -(p - 1.0));
  EXPECT_EQ(at, p - 1);
  // Ties go to the smallest rank, as MPI_MAXLOC does.
  float g = 0.0f;
  PS::Comm::getMaxValue(static_cast<float>(r % 2), r, g, at);
  EXPECT_EQ(g, p > 1 ? 1.0f : 0.0f);
  EXPECT_EQ(at, p > 1 ? 1 : 0);
  PS::Comm::getMinValue(static_cast<float>(r % 2), r, g, at);
  EXPECT_EQ(g, 0.0f);
  EXPECT_EQ(at, 0);
}

TEST(FdpsComm, BroadcastAndBranchAgreement) {
  const int r = PS::Comm::getRank(), p = PS::Comm::getNumberOfProc();
  std::vector<PS::S64> values(5, r == p - 1 ? 42 : -1);
  values[3] = r;
  PS::Comm::broadcast(values.data(), 5, p - 1);
  EXPECT_EQ(values, (std::vector<PS::S64>{42, 42, 42, p - 1, 42}));
  EXPECT_TRUE(PS::Comm::synchronizeConditionalBranchAND(true));
  EXPECT_FALSE(PS::Comm::synchronizeConditionalBranchAND(r != 0));
  EXPECT_TRUE(PS::Comm::synchronizeConditionalBranchOR(r == p - 1));
  EXPECT_FALSE(PS::Comm::synchronizeConditionalBranchOR(false));
  PS::Comm::barrier();
}

TEST(FdpsComm, GathersScattersAllToAll) {
  const int r = PS::Comm::getRank(), p = PS::Comm::getNumberOfProc();
  // gather / allGather: two values per rank.
  const int mine[2] = {10 * r, 10 * r + 1};
  std::vector<int> got(2 * p, -1), expected(2 * p);
  for (int k = 0; k < p; ++k) expected[2 * k] = 10 * k, expected[2 * k + 1] = 10 * k + 1;
  PS::Comm::allGather(mine, 2, got.data());
  EXPECT_EQ(got, expected);
  std::fill(got.begin(), got.end(), -1);
  PS::Comm::gather(mine, 2, got.data(), p - 1);
  if (r == p - 1) {
    EXPECT_EQ(got, expected);
  }

  // gatherV / allGatherV: rank k sends k + 1 values, placed with a gap of one between blocks.
  std::vector<double> send(r + 1, static_cast<double>(r));
  std::vector<int> n_recv(p), disp(p);
  int total = 0;
  for (int k = 0; k < p; ++k) n_recv[k] = k + 1, disp[k] = total, total += k + 2;
  std::vector<double> placed(total, -1.0), want(total, -1.0);
  for (int k = 0; k < p; ++k)
    for (int i = 0; i <= k; ++i) want[disp[k] + i] = k;
  PS::Comm::allGatherV(send.data(), r + 1, placed.data(), n_recv.data(), disp.data());
  EXPECT_EQ(placed, want);
  std::fill(placed.begin(), placed.end(), -1.0);
  PS::Comm::gatherV(send.data(), r + 1, placed.data(), n_recv.data(), disp.data());
  if (r == 0) {
    EXPECT_EQ(placed, want);
  }

  // scatter from the last rank: rank k gets {k, -k}.
  std::vector<int> table(2 * p);
  for (int k = 0; k < p; ++k) table[2 * k] = k, table[2 * k + 1] = -k;
  int two[2] = {-9, -9};
  PS::Comm::scatter(table.data(), 2, two, p - 1);
  EXPECT_EQ(two[0], r);
  EXPECT_EQ(two[1], -r);
  // scatterV from rank 0: rank k gets k + 1 copies of k.
  std::vector<int> flat, counts(p), offsets(p);
  for (int k = 0; k < p; ++k) {
    offsets[k] = static_cast<int>(flat.size());
    counts[k] = k + 1;
    flat.insert(flat.end(), k + 1, k);
  }
  std::vector<int> part(r + 1, -1);
  PS::Comm::scatterV(flat.data(), counts.data(), offsets.data(), part.data(), r + 1, 0);
  EXPECT_EQ(part, std::vector<int>(r + 1, r));

  // allToAll: rank r sends 100 r + k to rank k.
  std::vector<int> out(p), in(p, -1), in_want(p);
  for (int k = 0; k < p; ++k) out[k] = 100 * r + k, in_want[k] = 100 * k + r;
  PS::Comm::allToAll(out.data(), 1, in.data());
  EXPECT_EQ(in, in_want);
  // allToAllV: rank r sends k + 1 copies of r to rank k, laid out backwards.
  std::vector<int> vsend, vcount(p), vdisp(p);
  for (int k = p - 1; k >= 0; --k) {
    vdisp[k] = static_cast<int>(vsend.size());
    vcount[k] = k + 1;
    vsend.insert(vsend.end(), k + 1, r);
  }
  std::vector<int> rcount(p, r + 1), rdisp(p);
  for (int k = 0; k < p; ++k) rdisp[k] = k * (r + 1);
  std::vector<int> vrecv(p * (r + 1), -1), vwant(p * (r + 1));
  for (int k = 0; k < p; ++k)
    for (int i = 0; i <= r; ++i) vwant[k * (r + 1) + i] = k;
  PS::Comm::allToAllV(vsend.data(), vcount.data(), vdisp.data(), vrecv.data(), rcount.data(), rdisp.data());
  EXPECT_EQ(vrecv, vwant);
}

// A negative count on one rank (the last) stops every rank with that rank's message; no rank is
// left waiting in the gather.
TEST(FdpsUtilities, AllGatherParticleRefusesANegativeCountOnEveryRank) {
  const int r = PS::Comm::getRank(), p = PS::Comm::getNumberOfProc();
  const double mine[1] = {static_cast<double>(r)};
  double* all = nullptr;
  PS::S32 n_all = 0;
  try {
    PS::AllGatherParticle(all, n_all, mine, r == p - 1 ? -1 : 1);
    ADD_FAILURE() << "no error on rank " << r;
  } catch (const grove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("n_loc must not be negative, got -1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(all, nullptr);
  // The world is still usable: a good call gathers every rank's value in rank order.
  PS::AllGatherParticle(all, n_all, mine, 1);
  ASSERT_EQ(n_all, p);
  for (int k = 0; k < p; ++k) EXPECT_EQ(all[k], k);
  delete[] all;
}

TEST(FdpsComm, SendAndReceiveAroundARing) {
  const int r = PS::Comm::getRank(), p = PS::Comm::getNumberOfProc();
  if (p == 1) GTEST_SKIP() << "needs 2 ranks";
  const PS::F64vec token(r, 2.0 * r, 3.0 * r);
  PS::F64vec from_left;
  if (r % 2 == 0) {
    PS::Comm::send(&token, 1, (r + 1) % p, 7);
    PS::Comm::recv(&from_left, 1, (r + p - 1) % p, 7);
  } else {
    PS::Comm::recv(&from_left, 1, (r + p - 1) % p, 7);
    PS::Comm::send(&token, 1, (r + 1) % p, 7);
  }
  const int left = (r + p - 1) % p;
  EXPECT_EQ(from_left, PS::F64vec(left, 2.0 * left, 3.0 * left));
}

// ---- value types ----------------------------------------------------------------------------------------

TEST(FdpsTypes, ScalarWidths) {
  static_assert(sizeof(PS::S32) == 4 && sizeof(PS::U32) == 4 && sizeof(PS::S64) == 8 && sizeof(PS::U64) == 8);
  static_assert(sizeof(PS::F32) == 4 && sizeof(PS::F64) == 8);
  static_assert(std::is_same_v<PS::F64vec, grove::Vec3d> && std::is_same_v<PS::F32vec, grove::Vec3f>);
  static_assert(PS::DIMENSION == 3);
}

TEST(FdpsTypes, VectorsFollowFdpsSpelling) {
  PS::F64vec acc = 0.0;  // FDPS programs clear vectors this way
  EXPECT_EQ(acc, PS::F64vec(0.0, 0.0, 0.0));
  acc = 2;
  EXPECT_EQ(acc, PS::F64vec(2.0, 2.0, 2.0));
  const PS::F64vec a(1.0, 2.0, 3.0), b(-2.0, 0.5, 4.0);
  const PS::F64 inner = a * b;  // FDPS: vector * vector is the inner product
  EXPECT_EQ(inner, -2.0 + 1.0 + 12.0);
  EXPECT_EQ(a ^ b, PS::F64vec(2.0 * 4.0 - 3.0 * 0.5, 3.0 * -2.0 - 1.0 * 4.0, 1.0 * 0.5 - 2.0 * -2.0));
  EXPECT_EQ(2.0 * a * b, 2.0 * inner);  // (2a) . b
  EXPECT_EQ(a * 2.0, PS::F64vec(2.0, 4.0, 6.0));
  EXPECT_EQ(a[2], 3.0);
  std::ostringstream os;
  os << a;
  EXPECT_EQ(os.str(), "1   2    3");
  std::istringstream is("4 5 6");
  PS::F64vec c;
  is >> c;
  EXPECT_EQ(c, PS::F64vec(4.0, 5.0, 6.0));
  const PS::F32vec narrow = static_cast<PS::F32vec>(a);
  const PS::F64vec wide = narrow;
  EXPECT_EQ(wide, a);
}

TEST(FdpsTypes, OrthotopeHasFdpsMembersAndConvertsToGroveBoxes) {
  PS::F64ort box;  // negative volume: merging anything gives that thing
  box.merge(PS::F64vec(1.0, 2.0, 3.0));
  box.merge(PS::F64vec(-1.0, 0.0, 5.0));
  EXPECT_EQ(box.low_, PS::F64vec(-1.0, 0.0, 3.0));
  EXPECT_EQ(box.high_, PS::F64vec(1.0, 2.0, 5.0));
  EXPECT_EQ(box.getCenter(), PS::F64vec(0.0, 1.0, 4.0));
  EXPECT_EQ(box.getFullLength(), PS::F64vec(2.0, 2.0, 2.0));
  EXPECT_EQ(box.getHalfLength(), PS::F64vec(1.0, 1.0, 1.0));
  EXPECT_TRUE(box.overlapped(PS::F64vec(-1.0, 0.0, 3.0)));
  EXPECT_FALSE(box.overlapped(PS::F64vec(1.0, 1.0, 4.0)));  // half-open: the high face is outside
  EXPECT_TRUE(box.overlapped(PS::F64ort(PS::F64vec(1.0, 2.0, 5.0), PS::F64vec(9.0, 9.0, 9.0))));
  EXPECT_TRUE(box.notOverlapped(PS::F64ort(PS::F64vec(1.5, 0.0, 3.0), PS::F64vec(2.0, 1.0, 4.0))));
  EXPECT_TRUE(box.contains(PS::F64ort(box.getCenter(), 0.5)));
  EXPECT_FALSE(box.contains(PS::F64ort(box.getCenter(), 1.5)));
  EXPECT_EQ(box.getDistanceMinSQ(PS::F64vec(4.0, 1.0, 4.0)), 9.0);
  EXPECT_EQ(box.getDistanceMinSQ(PS::F64ort(PS::F64vec(3.0, 5.0, 4.0), PS::F64vec(4.0, 6.0, 4.5))), 4.0 + 9.0);
  EXPECT_EQ(box.shift(PS::F64vec(1.0)).low_, PS::F64vec(0.0, 1.0, 4.0));

  const grove::Boxd as_box = box;
  EXPECT_EQ(as_box.low, box.low_);
  EXPECT_EQ(as_box.high, box.high_);
  const PS::F64ort from_box = grove::Boxd{{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}};
  EXPECT_EQ(from_box.high_, PS::F64vec(1.0));
  const PS::F32ort narrow = box;
  EXPECT_EQ(narrow.low_, PS::F32vec(-1.0f, 0.0f, 3.0f));
}

struct SixComponents {
  double xx, yy, zz, xy, xz, yz;
};

TEST(FdpsTypes, SymmetricMatrix) {
  PS::F64mat quad = 0.0;
  EXPECT_EQ(quad, PS::F64mat(0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
  quad = PS::F64mat(1.0, 2.0, 3.0, 0.5, 0.25, -1.0);
  EXPECT_EQ(quad.getTrace(), 6.0);
  EXPECT_EQ(quad * PS::F64vec(1.0, 0.0, 0.0), PS::F64vec(1.0, 0.5, 0.25));
  EXPECT_EQ((quad + quad - 0.5 * quad) * 2.0, 3.0 * quad);
  const PS::F64mat copied = SixComponents{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(copied, PS::F64mat(1, 2, 3, 4, 5, 6));
  const grove::SymMat3d as_grove = copied;  // the tree's quadrupole type, both ways
  EXPECT_EQ(as_grove.trace(), 6.0);
  const PS::F64mat back = grove::symmetricOuter(grove::Vec3d(1.0, 2.0, 0.0), grove::Vec3d(1.0, 2.0, 0.0));
  EXPECT_EQ(back, PS::F64mat(1.0, 4.0, 0.0, 2.0, 0.0, 0.0));
}

TEST(FdpsTypes, EnumValuesAreGroves) {
  static_assert(PS::BOUNDARY_CONDITION_OPEN == grove::BoundaryCondition::OPEN);
  static_assert(PS::BOUNDARY_CONDITION_PERIODIC_XZ == grove::BoundaryCondition::PERIODIC_XZ);
  static_assert(grove::isPeriodic(PS::BOUNDARY_CONDITION_PERIODIC_Z, 2));
  static_assert(!grove::isPeriodic(PS::BOUNDARY_CONDITION_PERIODIC_XY, 2));
  static_assert(PS::MAKE_LIST == grove::MAKE_LIST && PS::REUSE_LIST == grove::REUSE_LIST);
  PS::INTERACTION_LIST_MODE mode = PS::MAKE_LIST_FOR_REUSE;
  EXPECT_EQ(grove::toString(mode), "MAKE_LIST_FOR_REUSE");
  PS::DomainInfo dinfo;
  dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_PERIODIC_XYZ);
  dinfo.setPosRootDomain(PS::F64vec(0.0), PS::F64vec(1.0));
  EXPECT_EQ(dinfo.getBoundaryCondition(), grove::BoundaryCondition::PERIODIC_XYZ);
}

TEST(FdpsTypes, WallClockAdvances) {
  const PS::F64 t0 = PS::GetWtime();
  volatile double sink = 0.0;
  for (int i = 0; i < 100000; ++i) sink = sink + 1.0;
  EXPECT_GE(PS::GetWtime(), t0);
}

// ---- ParticleSystem's FDPS members ---------------------------------------------------------------------

struct Tagged {
  PS::S64 id = 0;
  PS::F64vec pos;
  PS::F64vec getPos() const { return pos; }
};

PS::ParticleSystem<Tagged> numbered(int n) {
  PS::ParticleSystem<Tagged> psys;
  psys.initialize();
  psys.setNumberOfParticleLocal(n);
  for (int i = 0; i < n; ++i) psys[i].id = i, psys[i].pos = PS::F64vec(0.01 * i);
  return psys;
}

std::vector<PS::S64> ids(const PS::ParticleSystem<Tagged>& psys) {
  std::vector<PS::S64> out;
  for (const auto& p : psys) out.push_back(p.id);
  return out;
}

TEST(FdpsParticleSystem, CountsAndAdding) {
  auto psys = numbered(4 + PS::Comm::getRank());
  EXPECT_EQ(psys.getNumberOfParticleLocal(), 4 + PS::Comm::getRank());
  const int p = PS::Comm::getNumberOfProc();
  EXPECT_EQ(psys.getNumberOfParticleGlobal(), 4 * p + p * (p - 1) / 2);
  psys.addOneParticle(Tagged{99, PS::F64vec(0.5)});
  EXPECT_EQ(psys.getNumberOfParticleLocal(), 5 + PS::Comm::getRank());
  EXPECT_EQ(psys[psys.getNumberOfParticleLocal() - 1].id, 99);
  psys.setNumberOfParticleLocal(2);
  EXPECT_EQ(ids(psys), (std::vector<PS::S64>{0, 1}));
  EXPECT_THROW(psys.setNumberOfParticleLocal(-1), grove::Error);
}

TEST(FdpsParticleSystem, RemoveParticleRefillsFromTheEndAsFdps) {
  auto psys = numbered(6);
  const PS::S32 doomed[] = {1, 4, 1};  // repeats allowed
  psys.removeParticle(doomed, 3);
  // From the largest index down, each removed slot swaps with the last live one: 4 <-> 5, then
  // 1 <-> 4 (slot 4 now holding particle 5).
  EXPECT_EQ(ids(psys), (std::vector<PS::S64>{0, 5, 2, 3}));

  // Against the order-keeping grove::remove, as multisets, on random picks.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = static_cast<int>(rng() % 40);
    auto a = numbered(n), b = numbered(n);
    std::vector<PS::S32> idx;
    for (int k = 0, m = n ? static_cast<int>(rng() % (n + 1)) : 0; k < m; ++k)
      idx.push_back(static_cast<PS::S32>(rng() % static_cast<unsigned>(n)));
    a.removeParticle(idx.data(), static_cast<PS::S32>(idx.size()));
    b.remove(std::span<const grove::LocalIndex>(idx));
    auto ia = ids(a), ib = ids(b);
    ASSERT_EQ(ia.size(), ib.size());
    // Survivors before the first removed index keep their place.
    const int first = idx.empty() ? n : *std::min_element(idx.begin(), idx.end());
    for (int i = 0; i < first && i < static_cast<int>(ia.size()); ++i) ASSERT_EQ(ia[i], i);
    std::sort(ia.begin(), ia.end());
    ASSERT_EQ(ia, ib);
  }
}

TEST(FdpsParticleSystem, RemoveParticleOutOfRangeRemovesNothing) {
  auto psys = numbered(3);
  const PS::S32 bad[] = {0, 3};
  EXPECT_THROW(psys.removeParticle(bad, 2), grove::Error);
  EXPECT_EQ(ids(psys), (std::vector<PS::S64>{0, 1, 2}));
}

TEST(FdpsParticleSystem, SampleTargetReachesTheDomainDecomposition) {
  auto psys = numbered(500);
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.collectSampleParticle(psys);
  EXPECT_EQ(dinfo.getSampleCountLocal(), 500u);  // grove's default (1000 per rank), clamped
  psys.setAverageTargetNumberOfSampleParticlePerProcess(7);
  dinfo.collectSampleParticle(psys);
  EXPECT_EQ(dinfo.getSampleCountLocal(), 7u);
  dinfo.decomposeDomain();
  EXPECT_EQ(dinfo.getSampleCountPerRank(), grove::DomainInfo::kDefaultSamplesPerRank);  // the dinfo's own is kept
  EXPECT_THROW(psys.setAverageTargetNumberOfSampleParticlePerProcess(0), grove::Error);
}

TEST(FdpsParticleSystem, SortParticle) {
  auto psys = numbered(5);
  psys.sortParticle([](const Tagged& a, const Tagged& b) { return a.id > b.id; });
  EXPECT_EQ(ids(psys), (std::vector<PS::S64>{4, 3, 2, 1, 0}));
}

}  // namespace
