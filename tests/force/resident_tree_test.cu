// The GPU-resident pipeline (grove/gpu/resident.cuh) against the host's stages and trees on the same
// bodies: keys, order, cells and groups exactly; moments to double rounding; forces of the fused
// and list walks against grove's CPU tree with the same opening criterion; reuse steps bitwise;
// errors against direct summation as the CPU tree's; forEach / transformReduce as the host forms.
// Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/gravity_interactions.cuh"
#include "grove/force/resident_tree_long.cuh"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/for_each.cuh"
#include "grove/gpu/permute_in_place.hpp"
#include "grove/particles/for_each.hpp"
#include "gravity_leapfrog.hpp"
#include "resident_force_checks.hpp"
#include "resident_reference.hpp"
#include "resident_test_setup.cuh"
#include "search_probe.hpp"

namespace {

using namespace resident_test;

class ResidentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Forces of the device bodies (after write-back), indexed by id.
std::vector<user::GravityForce> forcesById(const grove::gpu::DeviceParticleSystem<user::Body>& psys) {
  const std::vector<user::Body> bodies = psys.download();
  std::vector<user::GravityForce> f(bodies.size());
  for (const auto& b : bodies) {
    auto& x = f[static_cast<std::size_t>(b.id)];
    x.acc = grove::Vec3f(b.acc);
    x.pot = static_cast<float>(b.pot);
  }
  return f;
}

struct Setup {
  std::vector<user::Body> bodies;
  grove::gpu::DeviceParticleSystem<user::Body> psys;
};

TEST_F(ResidentTest, BuildEqualsHostStages) {
  for (const bool clustered : {false, true}) {
    const auto bodies = clustered ? resident_test::plummerSphere(40000, 7) : resident_test::coldSphere(50000, 3);
    const auto host = resident_test::hostBuild(bodies, kLeaf, kGroup);
    grove::gpu::DeviceParticleSystem<user::Body> psys;
    psys.upload(bodies);
    Tree tree(kTheta, kLeaf, kGroup);
    tree.buildTree(psys);
    cudaStream_t s = nullptr;
    EXPECT_EQ(tree.rootCell().low, host.root.low);
    EXPECT_EQ(tree.rootCell().length, host.root.length);
    EXPECT_EQ(tree.keys().toHost(s), host.keys);
    EXPECT_EQ(tree.sortedIndex().toHost(s), host.order);
    // The particles themselves are now in key order.
    const std::vector<user::Body> sorted = psys.download();
    for (std::size_t k = 0; k < sorted.size(); ++k)
      ASSERT_EQ(sorted[k].id, static_cast<std::int64_t>(host.order[k])) << "key position " << k;
    const std::vector<grove::TreeCell> cells = tree.shape().cells.toHost(s);
    ASSERT_EQ(cells.size(), host.cells.size());
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const auto &a = cells[c], &b = host.cells[c];
      ASSERT_TRUE(a.prefix == b.prefix && a.ep_first == b.ep_first && a.ep_count == b.ep_count &&
                  a.sp_first == b.sp_first && a.sp_count == b.sp_count && a.child_first == b.child_first &&
                  a.child_count == b.child_count && a.level == b.level)
          << "cell " << c;
    }
    EXPECT_EQ(tree.shape().level_begin, host.level_begin);
    EXPECT_EQ(tree.groups().toHost(s), host.groups);
    const std::vector<grove::Boxd> boxes = tree.groupBoxes().toHost(s);
    ASSERT_EQ(boxes.size(), host.group_boxes.size());
    for (std::size_t g = 0; g < boxes.size(); ++g) ASSERT_EQ(boxes[g], host.group_boxes[g]) << "group " << g;
    // Moments: the same sums in the same order; the device may fuse multiply-adds.
    const std::vector<grove::MomentMonopole> moments = tree.moments().toHost(s);
    ASSERT_EQ(moments.size(), host.monopoles.size());
    double worst = 0;
    for (std::size_t c = 0; c < moments.size(); ++c) {
      const auto &a = moments[c], &b = host.monopoles[c];
      worst = std::max({worst, std::abs(a.mass - b.mass) / b.mass, grove::norm(a.pos - b.pos) / tree.rootCell().length});
    }
    std::printf("  [%s] %zu cells, %zu groups: moments differ by at most %.2e (relative)\n",
                clustered ? "plummer" : "cold", cells.size(), boxes.size(), worst);
    EXPECT_LE(worst, 1e-13);
  }
}

TEST_F(ResidentTest, QuadrupoleMomentsEqualHost) {
  const auto bodies = resident_test::plummerSphere(30000, 11);
  const auto host = resident_test::hostBuild(bodies, kLeaf, kGroup);
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  QuadTree tree(kTheta, kLeaf, kGroup);
  tree.buildTree(psys);
  const std::vector<grove::MomentQuadrupole> moments = tree.moments().toHost(nullptr);
  ASSERT_EQ(moments.size(), host.quadrupoles.size());
  double worst = 0;
  for (std::size_t c = 0; c < moments.size(); ++c) {
    const auto &a = moments[c].quad, &b = host.quadrupoles[c].quad;
    const double scale = std::abs(b.xx) + std::abs(b.yy) + std::abs(b.zz) + 1e-300;
    for (double d : {a.xx - b.xx, a.yy - b.yy, a.zz - b.zz, a.xy - b.xy, a.xz - b.xz, a.yz - b.yz})
      worst = std::max(worst, std::abs(d) / scale);
  }
  std::printf("  quadrupole moments differ by at most %.2e (relative to the trace)\n", worst);
  EXPECT_LE(worst, 1e-12);
}

// ---- other moment types: grove's geometric-centre moments and a user's own ---------------------

// A user's moment type with a second pass: mass, centre of mass, and the spread sum m |x - com|^2
// (members GROVE_HOST_DEVICE, the contract of grove's moments in grove/tree/moments.hpp).
struct UserSpreadMoment {
  static constexpr bool kHasSecondPass = true;
  double mass = 0.0;
  grove::Vec3d pos;
  double spread = 0.0;
  GROVE_HOST_DEVICE void init() { *this = {}; }
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  template <class EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf(const EPJ& p) {
    mass += static_cast<double>(p.getCharge());
    pos += static_cast<double>(p.getCharge()) * grove::positionOf(p);
  }
  GROVE_HOST_DEVICE void accumulate(const UserSpreadMoment& c) {
    mass += c.mass;
    pos += c.mass * c.pos;
  }
  GROVE_HOST_DEVICE void set() { pos = mass != 0.0 ? pos / mass : grove::Vec3d{}; }
  template <class EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf2(const EPJ& p) {
    spread += static_cast<double>(p.getCharge()) * grove::norm2(grove::positionOf(p) - pos);
  }
  GROVE_HOST_DEVICE void accumulate2(const UserSpreadMoment& c) {
    spread += c.spread + c.mass * grove::norm2(c.pos - pos);
  }
};
struct UserSpreadSPJ {
  double mass = 0.0;
  grove::Vec3d pos;
  double spread = 0.0;
  GROVE_HOST_DEVICE void copyFromMoment(const UserSpreadMoment& m) { mass = m.mass, pos = m.pos, spread = m.spread; }
  GROVE_HOST_DEVICE UserSpreadMoment convertToMoment() const {
    UserSpreadMoment m;
    m.mass = mass, m.pos = pos, m.spread = spread;
    return m;
  }
};

// Every field of a moment, each over its scale (charge: the cell's |charge|; positions: the root;
// dipoles: |charge| x root; second moments: |charge| x root^2), for comparisons.
std::vector<double> scaledFields(const grove::MomentMonopoleGeometricCenter& m, double q, double l) {
  return {m.charge / q, m.pos.x / l, m.pos.y / l, m.pos.z / l, static_cast<double>(m.n_ptcl)};
}
std::vector<double> scaledFields(const grove::MomentDipoleGeometricCenter& m, double q, double l) {
  auto f = scaledFields(static_cast<const grove::MomentMonopoleGeometricCenter&>(m), q, l);
  for (double d : {m.dipole.x, m.dipole.y, m.dipole.z}) f.push_back(d / (q * l));
  return f;
}
std::vector<double> scaledFields(const grove::MomentQuadrupoleGeometricCenter& m, double q, double l) {
  auto f = scaledFields(static_cast<const grove::MomentMonopoleGeometricCenter&>(m), q, l);
  for (double d : {m.dipole.x, m.dipole.y, m.dipole.z}) f.push_back(d / (q * l));
  for (double d : {m.quad.xx, m.quad.yy, m.quad.zz, m.quad.xy, m.quad.xz, m.quad.yz}) f.push_back(d / (q * l * l));
  return f;
}
std::vector<double> scaledFields(const UserSpreadMoment& m, double q, double l) {
  return {m.mass / q, m.pos.x / l, m.pos.y / l, m.pos.z / l, m.spread / (q * l * l)};
}

// The device's moments of every cell against momentOfCell swept bottom-up on the host over the
// host build's cells (what the CPU tree's computeMoments does), both passes where there are two.
template <class Moment, class SPJ>
void expectHostMoments(const char* what) {
  const auto bodies = resident_test::plummerSphere(30000, 17);
  const auto host = resident_test::hostBuild(bodies, kLeaf, kGroup);
  std::vector<user::GravityEPJ> epj(host.order.size());
  for (std::size_t k = 0; k < epj.size(); ++k) epj[k].copyFromFP(bodies[host.order[k]]);
  std::vector<Moment> expected(host.cells.size());
  constexpr int kPasses = grove::momentHasSecondPass<Moment>() ? 2 : 1;
  for (int pass = 1; pass <= kPasses; ++pass)
    for (int level = static_cast<int>(host.level_begin.size()) - 2; level >= 0; --level)
      for (std::uint32_t c = host.level_begin[static_cast<std::size_t>(level)];
           c < host.level_begin[static_cast<std::size_t>(level) + 1]; ++c)
        expected[c] = grove::momentOfCell<Moment>(pass, host.cells[c], epj.data(), static_cast<const SPJ*>(nullptr),
                                                  expected.data(), expected[c]);
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ, Moment, SPJ> tree(kTheta, kLeaf,
                                                                                                       kGroup);
  tree.buildTree(psys);
  const std::vector<Moment> got = tree.moments().toHost(nullptr);
  ASSERT_EQ(got.size(), expected.size()) << what;
  double worst = 0.0;
  for (std::size_t c = 0; c < got.size(); ++c) {
    const double q = std::abs(expected[c].getCharge()) + 1e-300, l = tree.rootCell().length;
    const std::vector<double> a = scaledFields(got[c], q, l), b = scaledFields(expected[c], q, l);
    for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(a[k] - b[k]));
  }
  std::printf("  [%s] %zu cells: moments differ by at most %.2e (scaled)\n", what, got.size(), worst);
  EXPECT_LE(worst, 1e-12) << what;
}

TEST_F(ResidentTest, GeometricCentreAndUserMomentsEqualHost) {
  expectHostMoments<grove::MomentMonopoleGeometricCenter, grove::SPJMonopoleGeometricCenter>("monopole, geometric centre");
  expectHostMoments<grove::MomentDipoleGeometricCenter, grove::SPJDipoleGeometricCenter>("dipole, geometric centre");
  expectHostMoments<grove::MomentQuadrupoleGeometricCenter, grove::SPJQuadrupoleGeometricCenter>(
      "quadrupole, geometric centre");
  expectHostMoments<UserSpreadMoment, UserSpreadSPJ>("user moment with a second pass");
}

// The fused walk, the list walk and the CPU tree give the same forces to float rounding (the same
// interactions in another order), for both moment types, uniform and clustered.
TEST_F(ResidentTest, ForcesEqualCpuTree) {
  for (const bool clustered : {false, true}) {
    const auto bodies = clustered ? resident_test::plummerSphere(60000, 5) : resident_test::coldSphere(60000, 9);
    const char* name = clustered ? "plummer" : "cold";
    for (const bool quadrupole : {false, true}) {
      const auto cpu = resident_test::hostTreeForces(bodies, kTheta, kLeaf, kGroup, kEps2, quadrupole);
      for (const bool fused : {true, false}) {
        grove::gpu::DeviceParticleSystem<user::Body> psys;
        psys.upload(bodies);
        grove::gpu::ResidentTreeOptions options;
        options.fused_walk = fused;
        char what[96];
        std::snprintf(what, sizeof what, "%s %s %s vs CPU tree", name, quadrupole ? "quadrupole" : "monopole",
                      fused ? "fused walk" : "list walk");
        if (quadrupole) {
          QuadTree tree(kTheta, kLeaf, kGroup, {}, options);
          tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpQuad{kEps2}, grove::MAKE_LIST);
        } else {
          Tree tree(kTheta, kLeaf, kGroup, {}, options);
          tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::MAKE_LIST);
          EXPECT_GT(tree.profile().interactions_ep, 0);
          EXPECT_GT(tree.profile().interactions_sp, 0);
        }
        resident_test::expectSameForces(forcesById(psys), cpu, what);
      }
    }
  }
}

// The same interaction counts (hence lists) as the CPU tree's walk, for both walk forms.
TEST_F(ResidentTest, InteractionCountsEqualCpuTree) {
  const auto bodies = resident_test::plummerSphere(30000, 21);
  std::int64_t counts[2][2] = {};
  for (const bool fused : {true, false}) {
    grove::gpu::DeviceParticleSystem<user::Body> psys;
    psys.upload(bodies);
    grove::gpu::ResidentTreeOptions options;
    options.fused_walk = fused;
    Tree tree(kTheta, kLeaf, kGroup, {}, options);
    tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2});
    counts[fused][0] = tree.profile().interactions_ep;
    counts[fused][1] = tree.profile().interactions_sp;
  }
  EXPECT_EQ(counts[0][0], counts[1][0]);
  EXPECT_EQ(counts[0][1], counts[1][1]);
  std::printf("  EP %lld, SP %lld interactions (fused and list walks agree)\n",
              static_cast<long long>(counts[1][0]), static_cast<long long>(counts[1][1]));
}

// Long-range trees with a search (FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY; the
// probe: search_probe.hpp): every body within search reach of a target reaches its kernel one by
// one (the probe's neighbour count is the brute force's), every body is counted once, and the
// probes and interaction counts are the CPU search tree's exactly, on a MAKE_LIST_FOR_REUSE step
// and the REUSE_LIST step after it, and with the fused walk. The same walk without the search
// loses neighbours, so the bodies do exercise it.
template <grove::LongSearchMode M>
using SearchTreeOf = std::conditional_t<
    M == grove::LongSearchMode::SCATTER,
    grove::gpu::ResidentTreeForForceLong<search_test::Probe, search_test::EPI, search_test::EPJ>::MonopoleWithScatterSearch,
    grove::gpu::ResidentTreeForForceLong<search_test::Probe, search_test::EPI, search_test::EPJ>::MonopoleWithSymmetrySearch>;

template <grove::LongSearchMode M>
void expectSearchTreeKeepsNeighbours(const char* name) {
  const std::size_t n = 30000;
  const auto bodies = resident_test::searchBodies(n, 29);
  const std::vector<int> brute = resident_test::bruteForceNeighbours(bodies, bodies, M);
  const resident_test::HostSearchResult host = resident_test::hostSearchTree(bodies, M, kSearchTheta, kLeaf, kGroup);
  const auto by_id = [](std::int64_t id) { return static_cast<std::size_t>(id); };
  auto expect_probes = [&](const std::vector<search_test::Body>& got, const auto& tree, const char* form) {
    const search_test::ProbeMismatches m = search_test::probeMismatches(got, by_id, brute, n, &host.probe, name);
    EXPECT_EQ(m.neighbours, 0) << name << ", " << form << ": bodies missing a neighbour";
    EXPECT_EQ(m.total, 0) << name << ", " << form << ": bodies not counting every body once";
    EXPECT_EQ(m.host, 0) << name << ", " << form << ": probes unlike the CPU search tree's";
    EXPECT_EQ(tree.profile().interactions_ep, host.interactions_ep) << name << ", " << form;
    EXPECT_EQ(tree.profile().interactions_sp, host.interactions_sp) << name << ", " << form;
  };
  grove::gpu::DeviceParticleSystem<search_test::Body> psys;
  psys.upload(bodies);
  SearchTreeOf<M> tree(kSearchTheta, kLeaf, kGroup);
  for (const auto mode : {grove::MAKE_LIST_FOR_REUSE, grove::REUSE_LIST}) {
    tree.calcForceAllAndWriteBack(psys, search_test::DeviceProbeEp<M>{}, search_test::DeviceProbeSp{}, mode);
    expect_probes(psys.download(), tree, mode == grove::REUSE_LIST ? "reuse" : "list walk");
  }
  std::printf("  %s: %lld EP + %lld SP interactions, as the CPU search tree\n", name,
              static_cast<long long>(tree.profile().interactions_ep),
              static_cast<long long>(tree.profile().interactions_sp));
  // The fused walk (MAKE_LIST with ResidentTreeOptions::fused_walk) searches alike.
  grove::gpu::ResidentTreeOptions fused;
  fused.fused_walk = true;
  grove::gpu::DeviceParticleSystem<search_test::Body> fused_bodies;
  fused_bodies.upload(bodies);
  SearchTreeOf<M> fused_tree(kSearchTheta, kLeaf, kGroup, {}, fused);
  fused_tree.calcForceAllAndWriteBack(fused_bodies, search_test::DeviceProbeEp<M>{}, search_test::DeviceProbeSp{},
                                      grove::MAKE_LIST);
  expect_probes(fused_bodies.download(), fused_tree, "fused walk");
  // The same walk without the search.
  grove::gpu::DeviceParticleSystem<search_test::Body> plain_bodies;
  plain_bodies.upload(bodies);
  using PlainTree = grove::gpu::ResidentTreeLong<search_test::Probe, search_test::EPI, search_test::EPJ>;
  PlainTree plain(kSearchTheta, kLeaf, kGroup);
  plain.calcForceAllAndWriteBack(plain_bodies, search_test::DeviceProbeEp<M>{}, search_test::DeviceProbeSp{});
  const search_test::ProbeMismatches lost =
      search_test::probeMismatches(plain_bodies.download(), by_id, brute, n, nullptr, "without the search");
  EXPECT_GT(lost.neighbours, 100) << name << ": the bodies do not test the search";
  EXPECT_EQ(lost.total, 0) << name;
  std::printf("  %s: without the search, %d of %zu bodies lose neighbours\n", name, lost.neighbours, n);
}

TEST_F(ResidentTest, ScatterSearchTreeKeepsNeighboursAsParticles) {
  expectSearchTreeKeepsNeighbours<grove::LongSearchMode::SCATTER>("scatter search");
}
TEST_F(ResidentTest, SymmetrySearchTreeKeepsNeighboursAsParticles) {
  expectSearchTreeKeepsNeighbours<grove::LongSearchMode::SYMMETRY>("symmetry search");
}

// A small rotation about z (moves every particle, keeps the order).
struct Swirl {
  double dt;
  GROVE_HOST_DEVICE void operator()(user::Body& b) const { b.pos += dt * grove::Vec3d(b.pos.y, -b.pos.x, 0.0); }
};

// Reuse: a REUSE_LIST step on unchanged particles gives bitwise the MAKE_LIST_FOR_REUSE step's
// forces and skips the build; after a drift it gives new forces; after an upload it is refused.
TEST_F(ResidentTest, ReuseIsBitwiseAndGuarded) {
  const auto bodies = resident_test::coldSphere(50000, 13);
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  Tree tree(kTheta, kLeaf, kGroup);
  EXPECT_THROW(tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::REUSE_LIST), grove::Error);
  tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::MAKE_LIST_FOR_REUSE);
  const std::vector<user::GravityForce> first = tree.forces().toHost(nullptr);
  EXPECT_TRUE(tree.listsKept());
  tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::REUSE_LIST);
  const std::vector<user::GravityForce> again = tree.forces().toHost(nullptr);
  ASSERT_EQ(first.size(), again.size());
  EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(user::GravityForce)), 0);
  EXPECT_EQ(tree.profile().sort, 0.0);  // no keys, sort or link on a reuse step
  EXPECT_EQ(tree.profile().link, 0.0);
  EXPECT_GT(tree.profile().moments, 0.0);
  // A drift moves particles but keeps their order: reuse works and differs from the first step.
  grove::gpu::forEach(psys.policy(), psys, Swirl{1e-3});
  tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::REUSE_LIST);
  const std::vector<user::GravityForce> moved = tree.forces().toHost(nullptr);
  EXPECT_NE(std::memcmp(first.data(), moved.data(), first.size() * sizeof(user::GravityForce)), 0);
  // Uploading replaces the particles: the kept lists no longer apply, and grove says so.
  psys.upload(bodies);
  EXPECT_THROW(tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::REUSE_LIST), grove::Error);
}

// Errors against direct summation in double: the device tree's median equals the CPU tree's
// within 2 %.
TEST_F(ResidentTest, ErrorAgainstDirectSummationAsCpuTree) {
  const auto bodies = resident_test::plummerSphere(40000, 17);
  std::vector<std::size_t> sample;
  for (std::size_t i = 0; i < bodies.size(); i += 37) sample.push_back(i);
  const auto direct = resident_test::directAccelerations(bodies, sample, kEps2);
  const auto cpu = resident_test::hostTreeForces(bodies, kTheta, kLeaf, kGroup, kEps2);
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  Tree tree(kTheta, kLeaf, kGroup);
  tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2});
  const auto gpu = forcesById(psys);
  std::vector<double> e_cpu, e_gpu;
  for (std::size_t s = 0; s < sample.size(); ++s) {
    const grove::Vec3d d = direct[s];
    e_cpu.push_back(grove::norm(grove::Vec3d(cpu[sample[s]].acc) - d) / grove::norm(d));
    e_gpu.push_back(grove::norm(grove::Vec3d(gpu[sample[s]].acc) - d) / grove::norm(d));
  }
  const double m_cpu = resident_test::quantile(e_cpu, 0.5), m_gpu = resident_test::quantile(e_gpu, 0.5);
  std::printf("  median error vs direct summation: CPU tree %.4e, resident GPU tree %.4e (%zu samples)\n", m_cpu,
              m_gpu, sample.size());
  EXPECT_NEAR(m_gpu, m_cpu, 0.02 * m_cpu);
  EXPECT_LT(m_gpu, 1e-2);
}

// ResidentTreeOptions::group_target cuts FDPS's groups into runs of at most the target: the runs
// tile the particles in key order (each once, none empty), none exceeds the target, each lies in
// one FDPS group; with smaller groups a body's walk opens fewer cells (fewer interactions), and
// the criterion, applied to a smaller box, keeps the error against direct summation within 10 %
// of FDPS's groups'.
TEST_F(ResidentTest, GroupTargetCutsGroupsIntoEqualRuns) {
  const auto bodies = resident_test::plummerSphere(40000, 17);
  std::vector<std::size_t> sample;
  for (std::size_t i = 0; i < bodies.size(); i += 37) sample.push_back(i);
  const auto direct = resident_test::directAccelerations(bodies, sample, kEps2);
  auto medianError = [&](const std::vector<user::GravityForce>& f) {
    std::vector<double> e;
    for (std::size_t s = 0; s < sample.size(); ++s)
      e.push_back(grove::norm(grove::Vec3d(f[sample[s]].acc) - direct[s]) / grove::norm(direct[s]));
    return resident_test::quantile(e, 0.5);
  };
  std::vector<std::uint64_t> fdps_groups;
  double fdps_error = 0.0, fdps_interactions = 0.0;
  for (const int target : {0, 64}) {
    grove::gpu::ResidentTreeOptions options;
    options.group_target = target;
    grove::gpu::DeviceParticleSystem<user::Body> psys;
    psys.upload(bodies);
    Tree tree(kTheta, kLeaf, kGroup, psys.policy(), options);
    tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2});
    const std::vector<std::uint64_t> groups = tree.groups().toHost(psys.stream());
    const double error = medianError(forcesById(psys));
    const auto interactions = static_cast<double>(tree.profile().interactions());
    std::printf("  group target %d: %zu groups, median error %.4e, %.0f interactions per body\n", target,
                groups.size(), error, interactions / static_cast<double>(bodies.size()));
    std::uint64_t next = 0;
    std::size_t fdps = 0;
    for (const std::uint64_t g : groups) {
      const std::uint64_t first = g >> 32, count = g & 0xffffffffu;
      ASSERT_EQ(first, next) << "groups tile the particles in key order";
      ASSERT_GT(count, 0u);
      ASSERT_LE(count, static_cast<std::uint64_t>(target > 0 ? target : kGroup));
      if (target > 0) {  // inside one FDPS group
        while (fdps < fdps_groups.size() && (fdps_groups[fdps] >> 32) + (fdps_groups[fdps] & 0xffffffffu) <= first)
          ++fdps;
        ASSERT_LT(fdps, fdps_groups.size());
        ASSERT_LE(first + count, (fdps_groups[fdps] >> 32) + (fdps_groups[fdps] & 0xffffffffu));
      }
      next = first + count;
    }
    ASSERT_EQ(next, bodies.size());
    if (target == 0) {
      fdps_groups = groups, fdps_error = error, fdps_interactions = interactions;
    } else {
      EXPECT_GT(groups.size(), fdps_groups.size());
      EXPECT_LT(interactions, fdps_interactions);
      EXPECT_LE(error, 1.1 * fdps_error);
    }
  }
}

// Nakasato's criterion opens at least what FDPS's does (l/theta + s >= l/theta), so its errors
// are no larger and its lists no shorter.
TEST_F(ResidentTest, NakasatoCriterionIsNoLooser) {
  const auto bodies = resident_test::plummerSphere(30000, 23);
  std::int64_t sp[2] = {}, ep[2] = {};
  for (const bool nakasato : {false, true}) {
    grove::gpu::DeviceParticleSystem<user::Body> psys;
    psys.upload(bodies);
    grove::gpu::ResidentTreeOptions options;
    options.opening = nakasato ? grove::gpu::OpeningRule::kNakasato : grove::gpu::OpeningRule::kFdps;
    Tree tree(kTheta, kLeaf, kGroup, {}, options);
    tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2});
    ep[nakasato] = tree.profile().interactions_ep;
    sp[nakasato] = tree.profile().interactions_sp;
  }
  std::printf("  interactions EP+SP: FDPS %lld, Nakasato %lld\n", static_cast<long long>(ep[0] + sp[0]),
              static_cast<long long>(ep[1] + sp[1]));
  EXPECT_GE(ep[1], ep[0]);
  EXPECT_GT(ep[1] + sp[1], 0);
}

// OpeningRule::kRmax (r_max / theta from the cells' tight extents) on the device is the host
// tree's: the same forces as the CPU tree under the same rule (monopole and quadrupole, list and
// fused walks, a cold and a Plummer sphere), and lists unlike FDPS's (the option does change the walk).
TEST_F(ResidentTest, RmaxOpeningEqualsCpuTree) {
  for (const bool clustered : {false, true}) {
    const auto bodies = clustered ? resident_test::plummerSphere(40000, 5) : resident_test::coldSphere(40000, 9);
    const char* name = clustered ? "plummer" : "cold";
    for (const bool quadrupole : {false, true}) {
      const auto cpu = resident_test::hostTreeForces(bodies, kTheta, kLeaf, kGroup, kEps2, quadrupole,
                                                     grove::OpeningRule::kRmax);
      std::int64_t fdps_interactions = 0;
      for (const int form : {0, 1, 2}) {  // FDPS's list walk, then r_max's list and fused walks
        const bool rmax = form > 0, fused = form == 2;
        grove::gpu::DeviceParticleSystem<user::Body> psys;
        psys.upload(bodies);
        grove::gpu::ResidentTreeOptions options;
        options.fused_walk = fused;
        if (rmax) options.opening = grove::gpu::OpeningRule::kRmax;
        std::int64_t interactions = 0;
        if (quadrupole) {
          QuadTree tree(kTheta, kLeaf, kGroup, {}, options);
          tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpQuad{kEps2}, grove::MAKE_LIST);
          interactions = tree.profile().interactions_ep + tree.profile().interactions_sp;
        } else {
          Tree tree(kTheta, kLeaf, kGroup, {}, options);
          tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2}, grove::MAKE_LIST);
          interactions = tree.profile().interactions_ep + tree.profile().interactions_sp;
        }
        if (!rmax) {
          fdps_interactions = interactions;
          continue;
        }
        char what[96];
        std::snprintf(what, sizeof what, "%s %s %s, r_max opening vs CPU tree", name,
                      quadrupole ? "quadrupole" : "monopole", fused ? "fused walk" : "list walk");
        resident_test::expectSameForces(forcesById(psys), cpu, what);
        std::printf("  %s: %lld interactions (FDPS's: %lld)\n", what, static_cast<long long>(interactions),
                    static_cast<long long>(fdps_interactions));
        EXPECT_NE(interactions, fdps_interactions) << what;
        EXPECT_GT(interactions, 0) << what;
      }
    }
  }
}

// Edge cases against the CPU tree: one body; bodies stacked on one point (a leaf that cannot
// split, larger than a walk chunk and than the shared index buffer); groups larger than a walk
// chunk (n_group_limit above kThreads * kIPerThread). Both walk forms.
TEST_F(ResidentTest, EdgeCasesMatchCpuTree) {
  struct Case {
    const char* name;
    std::vector<user::Body> bodies;
    int leaf, group;
  };
  std::vector<Case> cases;
  cases.push_back({"one body", resident_test::coldSphere(1, 31), kLeaf, kGroup});
  {
    auto stacked = resident_test::coldSphere(6000, 37);
    for (std::size_t i = 0; i < 3000; ++i) stacked[i].pos = {0.25, -0.125, 0.5};  // 3000 on one point
    cases.push_back({"3000 bodies on one point", stacked, kLeaf, kGroup});
  }
  cases.push_back({"group limit 2048", resident_test::plummerSphere(40000, 41), kLeaf, 2048});
  for (const Case& c : cases) {
    const auto cpu = resident_test::hostTreeForces(c.bodies, kTheta, c.leaf, c.group, kEps2);
    for (const bool fused : {true, false}) {
      grove::gpu::DeviceParticleSystem<user::Body> psys;
      psys.upload(c.bodies);
      grove::gpu::ResidentTreeOptions options;
      options.fused_walk = fused;
      Tree tree(kTheta, c.leaf, c.group, {}, options);
      tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2});
      const auto gpu = forcesById(psys);
      ASSERT_EQ(gpu.size(), cpu.size()) << c.name;
      double worst = 0, worst_pot = 0;
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        // Relative to |a| (a lone body feels nothing: both give exactly zero).
        const double a_cpu = grove::norm(grove::Vec3d(cpu[i].acc));
        const double diff = grove::norm(grove::Vec3d(gpu[i].acc) - grove::Vec3d(cpu[i].acc));
        worst = std::max(worst, a_cpu > 0.0 ? diff / a_cpu : diff);
        worst_pot = std::max(worst_pot, std::abs(double(gpu[i].pot) - double(cpu[i].pot)) / std::abs(double(cpu[i].pot)));
      }
      std::printf("  [%s, %s walk] %zu bodies: acc differs by at most %.2e, pot by %.2e (relative)\n", c.name,
                  fused ? "fused" : "list", cpu.size(), worst, worst_pot);
      EXPECT_LE(worst, 1e-4) << c.name;
      EXPECT_LE(worst_pot, 1e-4) << c.name;
    }
  }
}

// The LET decision on the device selects, for boxes near, far, overlapping and around the
// particles, exactly the cells and particles the host's walk does.
TEST_F(ResidentTest, LetSelectionEqualsHostWalk) {
  const auto bodies = resident_test::plummerSphere(50000, 53);
  const std::vector<grove::Boxd> targets = {
      {{2.0, -0.5, -0.5}, {3.0, 0.5, 0.5}},      // beside the core
      {{10.0, 10.0, 10.0}, {11.0, 12.0, 13.0}},  // far away
      {{-0.2, -0.2, -0.2}, {0.1, 0.3, 0.2}},     // inside the core
      {{-30.0, -30.0, -30.0}, {30.0, 30.0, 30.0}},  // around everything
      {{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}},        // a point
  };
  const auto host = resident_test::hostLetSelection(bodies, kTheta, kLeaf, targets);
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  Tree tree(kTheta, kLeaf, kGroup);
  tree.buildTree(psys);
  tree.selectLet(targets);
  const auto cells = tree.letCells().toHost(nullptr), particles = tree.letParticles().toHost(nullptr);
  const auto cell_offsets = tree.letCellOffsets().toHost(nullptr);
  const auto particle_offsets = tree.letParticleOffsets().toHost(nullptr);
  ASSERT_EQ(cell_offsets.size(), targets.size() + 1);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    std::vector<int> c(cells.begin() + cell_offsets[t], cells.begin() + cell_offsets[t + 1]);
    std::vector<int> p(particles.begin() + particle_offsets[t], particles.begin() + particle_offsets[t + 1]);
    std::sort(c.begin(), c.end());
    std::sort(p.begin(), p.end());
    EXPECT_EQ(c, host[t].cells) << "target " << t;
    EXPECT_EQ(p, host[t].particles) << "target " << t;
    std::printf("  LET target %zu: %zu cells, %zu particles (host: %zu, %zu)\n", t, c.size(), p.size(),
                host[t].cells.size(), host[t].particles.size());
  }
  EXPECT_THROW(tree.selectLet({grove::Boxd::empty()}), grove::Error);
}

// A walk that does not fit its stack stops with an error that names the option.
TEST_F(ResidentTest, StackOverflowIsAnError) {
  const auto bodies = resident_test::coldSphere(200000, 43);
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  grove::gpu::ResidentTreeOptions options;
  // The least accepted, one chunk's children. theta 0 opens every cell: the third chunk of pops
  // leaves ~50 level-2 cells' children (~280) on the stack, and the fourth pops 128 level-3
  // cells of ~700 bodies, whose ~1000 children do not fit in the ~870 entries above the ~150
  // still below them.
  options.stack_capacity = 8 * Tree::kWalkThreads;
  Tree tree(0.0, kLeaf, kGroup, {}, options);
  bool thrown = false;
  try {
    tree.calcForceAllAndWriteBack(psys, Ep{kEps2}, SpMono{kEps2});
  } catch (const grove::Error& e) {
    thrown = true;
    EXPECT_NE(std::string(e.what()).find("stack_capacity"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(thrown);
  options.stack_capacity = 10;
  EXPECT_THROW(Tree(kTheta, kLeaf, kGroup, {}, options), grove::Error);
}

// A whole step keeps the walks' stacks in the particle system's reorder buffer when they fit
// (it holds nothing between two builds): the same lists and forces, bitwise, as the stages run
// alone on the tree's own stacks, and no stack memory of the tree's own.
TEST_F(ResidentTest, StacksInTheReorderBufferGiveTheSameListsAndForces) {
  const auto bodies = resident_test::coldSphere(200000, 47);
  grove::gpu::ResidentTreeOptions options;
  // At most ~1600 blocks (one per group of <= 256) x 8 KB: 13 MB, within the reorder buffer's
  // 200000 x 96 bytes (3072 ints, 19.7 MB, did not fit on an H100).
  options.stack_capacity = 2048;
  grove::gpu::DeviceParticleSystem<user::Body> lent, own;
  lent.upload(bodies);
  own.upload(bodies);
  Tree whole(kTheta, kLeaf, kGroup, {}, options), stages(kTheta, kLeaf, kGroup, {}, options);
  whole.calcForceAllAndWriteBack(lent, Ep{kEps2}, SpMono{kEps2});
  ASSERT_TRUE(whole.stacksInReorderBuffer()) << "the stacks did not fit: lower stack_capacity in this test";
  stages.buildTree(own);
  stages.buildLists();
  stages.computeForceFromLists(Ep{kEps2}, SpMono{kEps2});
  EXPECT_FALSE(stages.stacksInReorderBuffer());
  EXPECT_EQ(whole.epjLists().toHost(nullptr), stages.epjLists().toHost(nullptr));
  EXPECT_EQ(whole.spjLists().toHost(nullptr), stages.spjLists().toHost(nullptr));
  const std::vector<user::GravityForce> a = whole.forces().toHost(nullptr), b = stages.forces().toHost(nullptr);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(user::GravityForce)), 0);
  EXPECT_LT(whole.deviceBytesByPart().lists, stages.deviceBytesByPart().lists);
  // A reuse step walks nothing and keeps the forces.
  whole.calcForceAllAndWriteBack(lent, Ep{kEps2}, SpMono{kEps2}, grove::MAKE_LIST_FOR_REUSE);
  whole.calcForceAllAndWriteBack(lent, Ep{kEps2}, SpMono{kEps2}, grove::REUSE_LIST);
  const std::vector<user::GravityForce> again = whole.forces().toHost(nullptr);
  EXPECT_EQ(std::memcmp(a.data(), again.data(), a.size() * sizeof(user::GravityForce)), 0);
}

// permuteInPlace against the host's permutation, for item sizes of every word width (16, 8, 4,
// 2 and 1 bytes) and items smaller than a column; gatherItems against the same.
TEST_F(ResidentTest, PermuteInPlaceEqualsTheHostsPermutation) {
  const std::size_t n = 100003;  // not a multiple of a block
  std::vector<std::uint32_t> index(n);
  for (std::size_t k = 0; k < n; ++k) index[k] = static_cast<std::uint32_t>(k);
  std::mt19937 rng(5);
  std::shuffle(index.begin(), index.end(), rng);
  grove::gpu::DeviceVector<std::uint32_t> d_index;
  d_index.assign(index.data(), n, nullptr);
  // Several passes of each word width: 96 and 48 (16-byte words), 24 and 40 (8), 20 and 36 (4),
  // 34 (2) and 33 (1); one pass: 12, 6, 13 and 1.
  for (const std::size_t item_bytes : {96u, 48u, 24u, 40u, 20u, 36u, 34u, 33u, 12u, 6u, 13u, 1u}) {
    SCOPED_TRACE("item bytes " + std::to_string(item_bytes));
    std::vector<unsigned char> items(n * item_bytes);
    for (auto& b : items) b = static_cast<unsigned char>(rng());
    std::vector<unsigned char> expected(items.size());
    for (std::size_t k = 0; k < n; ++k)
      std::memcpy(&expected[k * item_bytes], &items[index[k] * item_bytes], item_bytes);
    grove::gpu::DeviceVector<unsigned char> d_items, d_scratch, d_gathered;
    d_items.assign(items.data(), items.size(), nullptr);
    ASSERT_LE(grove::gpu::permuteScratchBytesPerItem(item_bytes), 16u);
    d_scratch.resize(n * grove::gpu::permuteScratchBytesPerItem(item_bytes));
    d_gathered.resize(items.size());
    grove::gpu::gatherItems(d_items.data(), n, item_bytes, d_index.data(), d_gathered.data(), nullptr);
    grove::gpu::permuteInPlace(d_items.data(), n, item_bytes, d_index.data(), d_scratch.data(), nullptr);
    EXPECT_TRUE(d_items.toHost(nullptr) == expected);
    EXPECT_TRUE(d_gathered.toHost(nullptr) == expected);
  }
  EXPECT_THROW(grove::gpu::permuteInPlace(nullptr, n, 8, d_index.data(), nullptr, nullptr), grove::Error);
  // Items that do not start on their word are refused, not misread.
  grove::gpu::DeviceVector<unsigned char> bytes(16 * 9), scratch(16 * 8);
  EXPECT_THROW(grove::gpu::permuteInPlace(bytes.data() + 4, 8, 16, d_index.data(), scratch.data(), nullptr),
               grove::Error);
}

// The same bodies in a particle system that reorders by copy and in one that reorders in place
// (ReorderMemory::kInPlace), each with a tree of its own.
struct ReorderPair {
  grove::gpu::DeviceParticleSystem<user::Body> copy, in_place;
  Tree copy_tree{kTheta, kLeaf, kGroup}, in_place_tree{kTheta, kLeaf, kGroup};
  explicit ReorderPair(const std::vector<user::Body>& bodies) {
    in_place.setReorderMemory(grove::gpu::ReorderMemory::kInPlace);
    copy.upload(bodies);
    in_place.upload(bodies);
  }
  // One force step (a build) on both: whether their bodies, forces and order, are bitwise alike.
  ::testing::AssertionResult stepGivesTheSameBodies() {
    copy_tree.calcForceAllAndWriteBack(copy, Ep{kEps2}, SpMono{kEps2});
    in_place_tree.calcForceAllAndWriteBack(in_place, Ep{kEps2}, SpMono{kEps2});
    const std::vector<user::Body> x = copy.download(), y = in_place.download();
    if (x.size() != y.size()) return ::testing::AssertionFailure() << x.size() << " against " << y.size() << " bodies";
    if (std::memcmp(x.data(), y.data(), x.size() * sizeof(user::Body)) != 0)
      return ::testing::AssertionFailure() << "the bodies differ";
    return ::testing::AssertionSuccess();
  }
};

// A particle system that reorders in place gives the particles, their order and the forces of one
// that gathers into a second array, bitwise, over builds that reorder everything, with 16 instead
// of 96 bytes per body for its reorders (and that scratch holding the sort's second buffers and
// the walks' stacks); reorderBuffer() and adoptReordered() are then refused.
TEST_F(ResidentTest, InPlaceReorderGivesTheCopysParticlesAndForces) {
  const auto bodies = resident_test::coldSphere(200000, 53);
  ReorderPair pair(bodies);
  for (int step = 0; step < 2; ++step) {
    EXPECT_TRUE(pair.stepGivesTheSameBodies()) << "step " << step;
    EXPECT_NE(pair.in_place.download().front().id, bodies.front().id);  // the build did reorder them
    EXPECT_EQ(pair.in_place.orderGeneration(), pair.copy.orderGeneration());
    // A large swirl (x += 0.5 (y, -x, 0)): the next build's key order is another.
    grove::gpu::forEach(pair.copy.policy(), pair.copy, Swirl{0.5});
    grove::gpu::forEach(pair.in_place.policy(), pair.in_place, Swirl{0.5});
  }
  // The copy's 19.2 MB reorder buffer is too small for the walks' stacks, which the tree then
  // holds itself; the in-place scratch (3.2 MB for the reorders) grows to hold them: one buffer
  // for both, and less memory in all.
  const Tree &a = pair.copy_tree, &b = pair.in_place_tree;
  EXPECT_EQ(pair.copy.reorderScratchBytes(), bodies.size() * sizeof(user::Body));
  EXPECT_FALSE(a.stacksInReorderBuffer());
  EXPECT_TRUE(b.stacksInReorderBuffer());
  EXPECT_GE(pair.in_place.reorderScratchBytes(), bodies.size() * 16);
  EXPECT_LT(pair.in_place.reorderScratchBytes() + b.deviceBytesByPart().lists,
            pair.copy.reorderScratchBytes() + a.deviceBytesByPart().lists);
  // The sort's second buffers are in that scratch too: 12 bytes per body fewer in the tree.
  EXPECT_LE(b.deviceBytesByPart().keys + bodies.size() * 12, a.deviceBytesByPart().keys);
  EXPECT_THROW(pair.in_place.reorderBuffer(), grove::Error);
  EXPECT_THROW(pair.in_place.adoptReordered(), grove::Error);
  EXPECT_EQ(pair.in_place.size(), bodies.size());  // refused, nothing lost
  // A small system's sort ends in its second buffers (one tile, one pass), which under kInPlace
  // are lent: the sorted keys and indices are copied back, and the result is still the copy's.
  ReorderPair few(resident_test::coldSphere(2000, 59));
  EXPECT_TRUE(few.stepGivesTheSameBodies());
}

struct MassOf {
  GROVE_HOST_DEVICE double operator()(const user::Body& b) const { return b.mass; }
};
struct Plus {
  GROVE_HOST_DEVICE double operator()(double a, double b) const { return a + b; }
};

TEST_F(ResidentTest, ForEachAndReduceMatchHost) {
  auto bodies = resident_test::coldSphere(10000, 29);
  for (auto& b : bodies) b.acc = b.pos;
  grove::gpu::DeviceParticleSystem<user::Body> psys;
  psys.upload(bodies);
  grove::gpu::forEach(psys.policy(), psys, user::Kick{0.25});
  grove::forEach(grove::Cpu{}, bodies, user::Kick{0.25});
  const std::vector<user::Body> back = psys.download();
  for (std::size_t i = 0; i < bodies.size(); ++i) ASSERT_EQ(back[i].vel, bodies[i].vel) << i;  // 0.25 * x: exact
  const double mass = grove::gpu::transformReduce(psys.policy(), psys, 0.0, Plus{}, MassOf{});
  EXPECT_NEAR(mass, 1.0, 1e-12);
  EXPECT_NEAR(mass, grove::transformReduce(grove::Cpu{}, bodies, 0.0, Plus{}, MassOf{}), 1e-13);
}

}  // namespace
