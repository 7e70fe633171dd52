// The FMM's near field on the device from the traversal's own lists (grove/fmm/device_near_field.cuh),
// against the same FmmForce with the same far-field engine and the host's pair form of the same
// GROVE_HOST_DEVICE interaction: only the near field's place differs. One lane per particle (a
// Force without +=) adds the pairs in the host's order, so with this target built without fused
// multiply-adds (-fmad=false) the forces are bitwise the host's; the split form (a Force with +=)
// sums lane groups and is checked to rounding. At 1-4 ranks sharing one GPU (received particles),
// open and periodic (the images' particles). Skips where there is no CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grove/fmm/device_far_field_gpu.h"
#include "grove/fmm/device_near_field.cuh"
#include "grove/fmm/fmm_force.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/grove.hpp"

namespace {

using grove::Vec3d;

// Without += : the device near field gives each i-particle one lane (the host's order).
struct LaneForce {
  Vec3d acc;
  double pot = 0.0;
  GROVE_HOST_DEVICE void clear() { acc = Vec3d(0.0, 0.0, 0.0), pot = 0.0; }
};
// With += : lane groups, summed in group order.
struct SplitForce {
  Vec3d acc;
  double pot = 0.0;
  GROVE_HOST_DEVICE void clear() { acc = Vec3d(0.0, 0.0, 0.0), pot = 0.0; }
  GROVE_HOST_DEVICE SplitForce& operator+=(const SplitForce& o) {
    acc.x += o.acc.x, acc.y += o.acc.y, acc.z += o.acc.z, pot += o.pot;
    return *this;
  }
};

struct Body {
  std::int64_t id = 0;
  double mass = 0.0;
  Vec3d pos, acc;
  double pot = 0.0;
  // GROVE_HOST_DEVICE: nvcc instantiates grove's host-device positionOf with it.
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  template <class Force>
  void copyFromForce(const Force& f) {
    acc = f.acc, pot = f.pot;
  }
};

struct Ep {
  Vec3d pos;
  double mass = 0.0;
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  void copyFromFP(const Body& b) { pos = b.pos, mass = b.mass; }
};

// Newton with Plummer softening, written with IEEE-rounded sqrt and division on host and device.
struct Newton {
  double eps2 = 1e-6;
  template <class Force>
  GROVE_HOST_DEVICE void operator()(const Ep& i, const Ep& j, Force& f) const {
    const double dx = j.pos.x - i.pos.x, dy = j.pos.y - i.pos.y, dz = j.pos.z - i.pos.z;
    const double r2 = dx * dx + dy * dy + dz * dz + eps2;
    const double r_inv = 1.0 / sqrt(r2);
    const double m_r_inv = j.mass * r_inv, m_r3_inv = m_r_inv * r_inv * r_inv;
    f.acc.x += m_r3_inv * dx;
    f.acc.y += m_r3_inv * dy;
    f.acc.z += m_r3_inv * dz;
    f.pot -= m_r_inv;
  }
};

// Leaves the far field out: the forces are the near field's alone, so the comparison is the P2P's.
struct NoFarField {
  template <class Force>
  void operator()(Force&, const Ep&, double, const Vec3d&) const {}
};

class FmmDeviceNear : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    grove::gpu::selectDeviceForRank(grove::Comm::world().rank());
  }
};

// n bodies (ids dealt round-robin over the ranks), decomposed: a Plummer-like cluster in an open
// box, or uniform in the periodic unit box; `coincident` of them at one point (a leaf larger than a
// warp).
void makeBodies(grove::ParticleSystem<Body>& psys, grove::DomainInfo& dinfo, int n, bool periodic,
                int coincident = 0) {
  const grove::Comm& comm = psys.comm();
  if (periodic) {
    dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
    dinfo.setPosRootDomain(Vec3d(0.0, 0.0, 0.0), Vec3d(1.0, 1.0, 1.0));
  }
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < n; ++k) {
    Vec3d x;
    if (k < coincident) {
      x = Vec3d(0.3, 0.6, 0.4);
    } else if (periodic) {
      x = Vec3d(u(rng), u(rng), u(rng));
    } else {
      // Plummer radii (scale 0.1), isotropic directions.
      const double m = 0.999 * u(rng), r = 0.1 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1.0);
      const double cos_t = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng), sin_t = std::sqrt(1.0 - cos_t * cos_t);
      x = Vec3d(r * sin_t * std::cos(phi), r * sin_t * std::sin(phi), r * cos_t);
    }
    if (k % comm.size() == comm.rank()) psys.add(Body{k, 1.0 / n, x, {}, 0.0});
  }
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

struct Forces {
  std::vector<Vec3d> acc;
  std::vector<double> pot;
};
Forces forcesOf(const grove::ParticleSystem<Body>& psys) {
  Forces f;
  for (const Body& b : psys.particles()) f.acc.push_back(b.acc), f.pot.push_back(b.pot);
  return f;
}

bool bitwiseEqual(const Forces& a, const Forces& b) {
  if (a.acc.size() != b.acc.size()) return false;
  for (std::size_t i = 0; i < a.acc.size(); ++i)
    if (a.acc[i].x != b.acc[i].x || a.acc[i].y != b.acc[i].y || a.acc[i].z != b.acc[i].z || a.pot[i] != b.pot[i])
      return false;
  return true;
}

// The largest |a - b| over the rms of b (force and potential), over every rank; over 1 where b
// vanishes everywhere (a few bodies far apart feel no near field).
std::pair<double, double> largestDifferences(const grove::Comm& comm, const Forces& a, const Forces& b) {
  double acc = 0.0, pot = 0.0, acc_rms = 0.0, pot_rms = 0.0;
  for (std::size_t i = 0; i < b.acc.size(); ++i) {
    acc = std::max(acc, grove::norm(a.acc[i] - b.acc[i]));
    pot = std::max(pot, std::abs(a.pot[i] - b.pot[i]));
    acc_rms += grove::norm2(b.acc[i]), pot_rms += b.pot[i] * b.pot[i];
  }
  const double count = comm.allreduceSum(static_cast<double>(b.acc.size()));
  acc_rms = std::sqrt(comm.allreduceSum(acc_rms) / count);
  pot_rms = std::sqrt(comm.allreduceSum(pot_rms) / count);
  return {comm.allreduceMax(acc) / (acc_rms > 0.0 ? acc_rms : 1.0),
          comm.allreduceMax(pot) / (pot_rms > 0.0 ? pot_rms : 1.0)};
}

// The host pair form and the device near field of one FmmForce with one device far-field engine,
// near field alone (NoFarField), then with gravity's far field.
template <class Force>
struct Compared {
  Forces host, device, host_gravity, device_gravity;
  grove::fmm::FmmStatistics host_stats, device_stats;
};

template <class Force>
Compared<Force> compare(int n, bool periodic, int n_leaf, int coincident = 0, long long particles_per_task = 8192) {
  grove::ParticleSystem<Body> psys;
  grove::DomainInfo dinfo;
  makeBodies(psys, dinfo, n, periodic, coincident);
  const auto engine = std::make_shared<grove::fmm::DeviceFarField>();
  auto near = grove::fmm::makeDeviceNearField<Force, Ep, Ep>(engine, Newton{}, particles_per_task);
  grove::FmmForce<Force, Ep, Ep> fmm(psys.size(), 0.5, n_leaf, periodic ? 4 : 3);
  fmm.setFarFieldEngine(engine);
  Compared<Force> c;
  fmm.calcForceAllAndWriteBack(Newton{}, psys, dinfo, NoFarField{});
  c.host = forcesOf(psys);
  c.host_stats = fmm.statistics();
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo, NoFarField{});
  c.device = forcesOf(psys);
  c.device_stats = fmm.statistics();
  fmm.calcForceAllAndWriteBack(Newton{}, psys, dinfo);
  c.host_gravity = forcesOf(psys);
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo);
  c.device_gravity = forcesOf(psys);
  return c;
}

template <class Force>
void expectSameWork(const Compared<Force>& c) {
  EXPECT_EQ(c.device_stats.p2p_interactions, c.host_stats.p2p_interactions);
  EXPECT_EQ(c.device_stats.p2p_leaf_pairs, c.host_stats.p2p_leaf_pairs);
  EXPECT_EQ(c.device_stats.m2l, c.host_stats.m2l);
  EXPECT_GT(c.device_stats.p2p_interactions, 0);
  EXPECT_GT(c.device_stats.p2p_kernel_seconds, 0.0);
  EXPECT_EQ(c.host_stats.p2p_kernel_seconds, 0.0);
  EXPECT_STREQ(c.device_stats.far_field_engine, "device");
}

}  // namespace

// One lane per particle: the host's order of every addition, so bitwise; then with gravity's far
// field (the same device engine's) bitwise too. At several ranks the received particles are in
// the lists.
TEST_F(FmmDeviceNear, OneLanePerParticleIsBitwiseTheHostPairForm) {
  const auto c = compare<LaneForce>(20000, false, 32);
  expectSameWork(c);
  EXPECT_TRUE(bitwiseEqual(c.device, c.host));
  EXPECT_TRUE(bitwiseEqual(c.device_gravity, c.host_gravity));
  if (grove::Comm::world().size() > 1) EXPECT_GT(c.device_stats.let.particles_received, 0);
  // The device engine began on the local cells before the LET wherever there was one.
  EXPECT_EQ(c.device_stats.local_before_let, grove::Comm::world().size() > 1);
  EXPECT_EQ(c.host_stats.local_before_let, grove::Comm::world().size() > 1);
  // And the device near field began on the local leaf pairs before it too; the received pairs
  // then continued each lane's sum, so the forces are still bitwise the host's.
  EXPECT_EQ(c.device_stats.near_field_before_let, grove::Comm::world().size() > 1);
  EXPECT_FALSE(c.host_stats.near_field_before_let);  // a host near field has nothing to start early
}

// Lane groups summed in group order: the same sums, another order: within double rounding.
TEST_F(FmmDeviceNear, LaneGroupsMatchTheHostPairFormToRounding) {
  const auto c = compare<SplitForce>(20000, false, 32);
  expectSameWork(c);
  const grove::Comm& comm = grove::Comm::world();
  const auto [acc, pot] = largestDifferences(comm, c.device, c.host);
  EXPECT_LE(acc, 1e-13);
  EXPECT_LE(pot, 1e-13);
  const auto [acc_g, pot_g] = largestDifferences(comm, c.device_gravity, c.host_gravity);
  EXPECT_LE(acc_g, 1e-13);
  EXPECT_LE(pot_g, 1e-13);
  if (comm.rank() == 0)
    std::printf("  [split form, %d ranks] max |device - host| / rms: acc %.2e, pot %.2e\n", comm.size(), acc, pot);
}

// Every list cut into windows of about 64 source particles (most targets then have several):
// their partial forces are summed in window order, to rounding of the host's, and the same
// bitwise from call to call; with clear = false the sums start from the previous forces.
TEST_F(FmmDeviceNear, ListsCutIntoTasksAddTheirPartialForcesInOrder) {
  const grove::Comm& comm = grove::Comm::world();
  const auto c = compare<SplitForce>(20000, false, 32, 0, 64);
  expectSameWork(c);
  const auto [acc, pot] = largestDifferences(comm, c.device, c.host);
  EXPECT_LE(acc, 1e-13);
  EXPECT_LE(pot, 1e-13);

  grove::ParticleSystem<Body> psys;
  grove::DomainInfo dinfo;
  makeBodies(psys, dinfo, 5000, false);
  const auto engine = std::make_shared<grove::fmm::DeviceFarField>();
  auto near = grove::fmm::makeDeviceNearField<SplitForce, Ep, Ep>(engine, Newton{}, 64);
  grove::FmmForce<SplitForce, Ep, Ep> fmm(psys.size(), 0.5, 32, 4);
  fmm.setFarFieldEngine(engine);
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo);
  const Forces once = forcesOf(psys);
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo);
  EXPECT_TRUE(bitwiseEqual(forcesOf(psys), once)) << "the sums' order must not depend on timing";
  fmm.calcForceAllOnDevice(*near, psys, dinfo);
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo, false);
  const Forces twice = forcesOf(psys);
  for (std::size_t i = 0; i < once.acc.size(); ++i) {
    ASSERT_NEAR(twice.pot[i], 2.0 * once.pot[i], 1e-12 * std::abs(once.pot[i])) << "particle " << i;
    ASSERT_LE(grove::norm(twice.acc[i] - 2.0 * once.acc[i]), 1e-12 * grove::norm(once.acc[i])) << "particle " << i;
  }
  EXPECT_THROW((grove::fmm::makeDeviceNearField<SplitForce, Ep, Ep>(engine, Newton{}, 0)), grove::Error);
}

// Periodic: the images' particles come as received trees; their leaves are P2P sources as any.
TEST_F(FmmDeviceNear, PeriodicImagesAreSourcesAsReceivedParticlesAre) {
  const auto lane = compare<LaneForce>(8000, true, 32);
  expectSameWork(lane);
  EXPECT_GT(lane.device_stats.let.particles_received, 0);
  EXPECT_TRUE(lane.device_stats.local_before_let);  // the images' LET, at one rank too
  // Its near field starts before the LET only across ranks (the images alone are made too fast).
  EXPECT_EQ(lane.device_stats.near_field_before_let, grove::Comm::world().size() > 1);
  EXPECT_TRUE(bitwiseEqual(lane.device, lane.host));
  EXPECT_TRUE(bitwiseEqual(lane.device_gravity, lane.host_gravity));
  const auto split = compare<SplitForce>(8000, true, 32);
  const auto [acc, pot] = largestDifferences(grove::Comm::world(), split.device, split.host);
  EXPECT_LE(acc, 1e-13);
  EXPECT_LE(pot, 1e-13);
}

// 100 bodies at one point make a leaf of 100 (coincident keys cannot be split): four tasks, one
// per chunk of 32 of its particles (with lane groups the last chunk, of 4, in groups of 4 lanes);
// n_leaf 64 gives leaves of up to 64 (two chunks) elsewhere.
TEST_F(FmmDeviceNear, LeavesLargerThanAWarp) {
  const auto lane = compare<LaneForce>(6000, false, 64, 100);
  expectSameWork(lane);
  EXPECT_TRUE(bitwiseEqual(lane.device, lane.host));
  // Lane groups, then also lists cut into windows of about 64 source particles (a leaf of 100 is
  // then a source larger than a window).
  for (const long long particles_per_task : {8192LL, 64LL}) {
    const auto split = compare<SplitForce>(6000, false, 64, 100, particles_per_task);
    expectSameWork(split);
    const auto [acc, pot] = largestDifferences(grove::Comm::world(), split.device, split.host);
    EXPECT_LE(acc, 1e-13) << "windows of " << particles_per_task;
    EXPECT_LE(pot, 1e-13) << "windows of " << particles_per_task;
  }
}

// Three bodies over up to four ranks: some ranks have none (a root cell without particles, no
// tasks), and the others' leaves hold one or two.
TEST_F(FmmDeviceNear, EmptyRanksAndTinySystems) {
  const auto lane = compare<LaneForce>(3, false, 32);
  EXPECT_TRUE(bitwiseEqual(lane.device, lane.host));
  EXPECT_EQ(lane.device_stats.p2p_interactions, lane.host_stats.p2p_interactions);
  EXPECT_EQ(grove::Comm::world().allreduceSum(static_cast<double>(lane.device.acc.size())), 3.0);
  EXPECT_TRUE(bitwiseEqual(lane.device_gravity, lane.host_gravity));
  const auto split = compare<SplitForce>(3, false, 32);
  const auto [acc, pot] = largestDifferences(grove::Comm::world(), split.device_gravity, split.host_gravity);
  EXPECT_LE(acc, 1e-13);
  EXPECT_LE(pot, 1e-13);
}

// clear = false adds the near and far field to the previous call's forces, on the device as on
// the host: bitwise with one lane per particle, to rounding with lane groups (whose first group
// starts from the previous force; at n_leaf 64 also in a leaf's last chunk of particles beyond
// the first 32).
template <class Force>
void expectClearFalseAdds(bool bitwise, int n_leaf = 32) {
  grove::ParticleSystem<Body> psys;
  grove::DomainInfo dinfo;
  makeBodies(psys, dinfo, 5000, false);
  const auto engine = std::make_shared<grove::fmm::DeviceFarField>();
  auto near = grove::fmm::makeDeviceNearField<Force, Ep, Ep>(engine, Newton{});
  grove::FmmForce<Force, Ep, Ep> fmm(psys.size(), 0.5, n_leaf, 4);
  fmm.setFarFieldEngine(engine);
  fmm.calcForceAll(Newton{}, psys, dinfo);
  fmm.calcForceAllAndWriteBack(Newton{}, psys, dinfo, false);
  const Forces host_twice = forcesOf(psys);
  fmm.calcForceAllOnDevice(*near, psys, dinfo);
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo, false);
  const Forces device_twice = forcesOf(psys);
  if (bitwise) EXPECT_TRUE(bitwiseEqual(device_twice, host_twice));
  const auto [acc, pot] = largestDifferences(grove::Comm::world(), device_twice, host_twice);
  EXPECT_LE(acc, 1e-13);
  EXPECT_LE(pot, 1e-13);
  fmm.calcForceAllAndWriteBack(Newton{}, psys, dinfo);
  const Forces once = forcesOf(psys);
  for (std::size_t i = 0; i < once.acc.size(); ++i)
    ASSERT_NEAR(device_twice.pot[i], 2.0 * once.pot[i], 1e-12 * std::abs(once.pot[i])) << "particle " << i;
}

TEST_F(FmmDeviceNear, ClearFalseAddsToThePreviousForces) {
  expectClearFalseAdds<LaneForce>(true);
  expectClearFalseAdds<SplitForce>(false);
  expectClearFalseAdds<SplitForce>(false, 64);
}

// The near field of the local leaf pairs started before the LET (startLocal) in a calculation
// that fails before evaluate() completes it: evaluate() is refused while the engine's start()
// has not completed the calculation, and what startLocal() queued is dropped; the objects then
// compute as before. A startLocal() without the engine's, or with arrays not of its tree, is
// refused. Each rank on its own (no messages), so there are no received pairs here: the tests
// above compare the two launches with received pairs (several ranks, periodic images) to the
// host's forces, bitwise with one lane per particle.
TEST_F(FmmDeviceNear, ALocalStartThatNoEvaluateCompletesIsDropped) {
  const int n = 3000;
  std::mt19937_64 rng(7 + grove::Comm::world().rank());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Vec3d> x(n);
  for (Vec3d& p : x) p = Vec3d(u(rng), u(rng), u(rng));
  const std::vector<double> q(n, 1.0 / n);
  const grove::fmm::MultiIndexSet expansion(4);
  const auto engine = std::make_shared<grove::fmm::DeviceFarField>();
  auto near = grove::fmm::makeDeviceNearField<SplitForce, Ep, Ep>(engine, Newton{});
  std::vector<Ep> ep(n);
  std::vector<SplitForce> forces(n);
  EXPECT_THROW(near->startLocal(ep, ep, forces, true), grove::Error);  // the engine began nothing

  grove::fmm::FmmTree tree;
  engine->buildTree(x, q, 32, expansion, tree);
  for (int k = 0; k < n; ++k) ep[k] = Ep{x[tree.order()[k]], q[tree.order()[k]]};
  const std::span<const Ep> epi(ep);
  ASSERT_TRUE(engine->startLocal(tree, 0.5, expansion));
  EXPECT_THROW(near->startLocal(epi.first(n - 1), epi, forces, true), grove::Error);
  EXPECT_THROW(near->startLocal(epi, epi.first(n - 1), forces, true), grove::Error);
  ASSERT_TRUE(near->startLocal(epi, epi, forces, true));
  EXPECT_THROW(near->evaluate(epi, epi, forces, true), grove::Error);  // no start() completed it
  engine->abandon();

  // Then the whole near field in one launch, and in two (the local pairs, then the received:
  // none here), as FmmForce runs them without and with a LET: the same tasks, bitwise.
  const grove::fmm::SourceCells sources = grove::fmm::SourceCells::ofTree(tree);
  std::vector<double> phi(n);
  std::vector<Vec3d> gradient(n);
  std::vector<SplitForce> whole(n), split(n);
  engine->start(tree, sources, 0.5, expansion, phi, gradient, true, /*p2p_to_host=*/false);
  const std::int64_t pairs = near->evaluate(epi, epi, whole, true);
  engine->finish();
  EXPECT_GE(pairs, static_cast<std::int64_t>(n));  // each particle with itself at least
  ASSERT_TRUE(engine->startLocal(tree, 0.5, expansion));
  const std::int64_t local_pairs = engine->deviceLocalP2p().pairs;
  ASSERT_TRUE(near->startLocal(epi, epi, split, true));
  engine->start(tree, sources, 0.5, expansion, phi, gradient, true, /*p2p_to_host=*/false);
  EXPECT_EQ(near->evaluate(epi, epi, split, true), pairs);
  engine->finish();
  EXPECT_EQ(engine->deviceReceivedP2p().pairs, 0);
  EXPECT_EQ(local_pairs, engine->deviceP2p().pairs);
  EXPECT_THROW(engine->deviceLocalP2p(), grove::Error);  // that calculation is complete
  for (int k = 0; k < n; ++k) {
    ASSERT_EQ(split[k].pot, whole[k].pot) << "particle " << k;
    ASSERT_EQ(split[k].acc.x, whole[k].acc.x) << "particle " << k;
    ASSERT_NE(whole[k].pot, 0.0) << "particle " << k;
  }
}

// A near field that fails after its local part started (across ranks, before the LET): FmmForce
// has it drop what it queued (abandon) before the error leaves, and the next calculation gives
// the forces of one that never failed.
struct NearFieldFailingInEvaluate final : grove::fmm::NearFieldOnDevice<SplitForce, Ep, Ep> {
  explicit NearFieldFailingInEvaluate(grove::fmm::NearFieldOnDevice<SplitForce, Ep, Ep>& near) : real(near) {}
  const grove::fmm::FarFieldEngine& engine() const override { return real.engine(); }
  bool startLocal(std::span<const Ep> epi, std::span<const Ep> local_epj, std::span<const SplitForce> forces,
                  bool forces_cleared) override {
    ++started;
    return real.startLocal(epi, local_epj, forces, forces_cleared);
  }
  std::int64_t evaluate(std::span<const Ep>, std::span<const Ep>, std::span<SplitForce>, bool) override {
    throw grove::Error("test", "a near field failing on purpose");
  }
  void abandon() noexcept override {
    ++abandoned;
    real.abandon();
  }
  double kernelSeconds() const override { return 0.0; }
  std::size_t deviceBytes() const override { return 0; }
  grove::fmm::NearFieldOnDevice<SplitForce, Ep, Ep>& real;
  int started = 0, abandoned = 0;
};

TEST_F(FmmDeviceNear, ANearFieldFailingAfterItsLocalStartIsAbandoned) {
  grove::ParticleSystem<Body> psys;
  grove::DomainInfo dinfo;
  makeBodies(psys, dinfo, 5000, false);
  const auto engine = std::make_shared<grove::fmm::DeviceFarField>();
  auto near = grove::fmm::makeDeviceNearField<SplitForce, Ep, Ep>(engine, Newton{});
  grove::FmmForce<SplitForce, Ep, Ep> fmm(psys.size(), 0.5, 32, 4);
  fmm.setFarFieldEngine(engine);
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo);
  const Forces before = forcesOf(psys);
  NearFieldFailingInEvaluate failing(*near);
  EXPECT_THROW(fmm.calcForceAllAndWriteBackOnDevice(failing, psys, dinfo), grove::Error);
  const int expected = grove::Comm::world().size() > 1 ? 1 : 0;  // one rank: no start before a LET
  EXPECT_EQ(failing.started, expected);
  EXPECT_EQ(failing.abandoned, expected);
  EXPECT_TRUE(bitwiseEqual(forcesOf(psys), before)) << "the failed call wrote forces back";
  fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo);
  EXPECT_TRUE(bitwiseEqual(forcesOf(psys), before)) << "the next calculation differs from the first";
}

// A near field made for another engine than the FmmForce's is refused before anything runs, and
// an engine without a device cannot keep lists on one.
TEST_F(FmmDeviceNear, AnotherEnginesNearFieldIsRefused) {
  grove::ParticleSystem<Body> psys;
  grove::DomainInfo dinfo;
  makeBodies(psys, dinfo, 1000, false);
  auto near = grove::fmm::makeDeviceNearField<LaneForce, Ep, Ep>(std::make_shared<grove::fmm::DeviceFarField>(),
                                                                 Newton{});
  grove::FmmForce<LaneForce, Ep, Ep> fmm(psys.size(), 0.5, 32, 4);  // the host's far field
  try {
    fmm.calcForceAllOnDevice(*near, psys, dinfo);
    ADD_FAILURE() << "no error";
  } catch (const grove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("another far-field engine"), std::string::npos) << e.what();
  }
  fmm.setFarFieldEngine(std::make_shared<grove::fmm::DeviceFarField>());
  EXPECT_THROW(fmm.calcForceAllOnDevice(*near, psys, dinfo), grove::Error);
  {  // The host engine has no device to keep its lists on.
    const std::vector<Vec3d> x{Vec3d(0.1, 0.2, 0.3), Vec3d(0.4, 0.5, 0.6)};
    const std::vector<double> q{1.0, 1.0};
    const grove::fmm::MultiIndexSet expansion(4);
    grove::fmm::FmmTree tree;
    tree.build(x, q, 32, expansion);
    grove::fmm::SourceCells sources = grove::fmm::SourceCells::ofTree(tree);
    std::vector<double> phi(x.size());
    std::vector<Vec3d> gradient(x.size());
    grove::fmm::HostFarField host;
    EXPECT_THROW(host.start(tree, sources, 0.5, expansion, phi, gradient, false, /*p2p_to_host=*/false), grove::Error);
  }
  EXPECT_THROW(grove::fmm::DeviceFarField().deviceP2p(), grove::Error);
  // The object still works with its own engine's near field afterwards.
  const auto engine = std::make_shared<grove::fmm::DeviceFarField>();
  fmm.setFarFieldEngine(engine);
  auto own = grove::fmm::makeDeviceNearField<LaneForce, Ep, Ep>(engine, Newton{});
  fmm.calcForceAllOnDevice(*own, psys, dinfo);
  EXPECT_GT(fmm.statistics().p2p_interactions, 0);
  // Arrays that are not the traversal's are refused, not read past their ends.
  std::vector<LaneForce> one(1);
  EXPECT_THROW(own->evaluate(std::span<const Ep>(), std::span<const Ep>(), one, true), grove::Error);
  // The same engine then serves a host near field, its lists on the host, whole.
  const std::int64_t device_interactions = fmm.statistics().p2p_interactions;
  fmm.calcForceAll(Newton{}, psys, dinfo);
  EXPECT_EQ(fmm.statistics().p2p_interactions, device_interactions);
}
