// End to end: grove's long-range trees calling the CUDA multiwalks (engine and hand-written
// template) through calcForceAllAndWriteBackMultiWalk[Index], against the same tree's CPU kernels:
// MAKE_LIST_FOR_REUSE, REUSE_LIST (lists kept on the device), plain and index forms, one and
// several tags; and the FMM with its near field through the same hooks and its traversal and far
// field on the device. Single process; skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/gravity_multiwalk_gpu.h"
#include "gravity_kernels.hpp"
#include "grove/fmm/device_far_field_gpu.h"
#include "grove/fmm/fmm_force.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"

namespace {

constexpr float kEps2 = 1e-4f;
constexpr int kWalkLimit = 64;
using Trees = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;

struct Result {
  std::vector<grove::Vec3d> acc;
  std::vector<double> pot;
};

Result resultOf(const grove::ParticleSystem<user::Body>& bodies) {
  Result r;
  for (const auto& b : bodies) r.acc.push_back(b.acc), r.pot.push_back(b.pot);
  return r;
}

bool bitwiseEqual(const Result& a, const Result& b) {
  return a.acc.size() == b.acc.size() &&
         std::memcmp(a.acc.data(), b.acc.data(), a.acc.size() * sizeof(grove::Vec3d)) == 0 &&
         std::memcmp(a.pot.data(), b.pot.data(), a.pot.size() * sizeof(double)) == 0;
}

// Per-particle relative differences from the CPU kernels. Near the sphere's centre the net force
// is a small difference of large terms, so there the two float summation orders differ by up to
// ~1e-5 relative (measured with a CPU emulation of the device arithmetic: max 1.1e-5 at r = 0.1,
// 99.9th percentile 2.9e-6, median 4.2e-7): bounded as median 1e-6, p99.9 1e-5, max 1e-4.
void expectClose(const Result& got, const Result& ref, const char* what) {
  std::vector<double> acc, pot;
  for (std::size_t i = 0; i < ref.acc.size(); ++i) {
    acc.push_back(grove::norm(got.acc[i] - ref.acc[i]) / grove::norm(ref.acc[i]));
    pot.push_back(std::abs(got.pot[i] - ref.pot[i]) / std::abs(ref.pot[i]));
  }
  std::sort(acc.begin(), acc.end()), std::sort(pot.begin(), pot.end());
  auto at = [](const std::vector<double>& v, double q) {
    return v[static_cast<std::size_t>(q * double(v.size() - 1))];
  };
  EXPECT_LE(at(acc, 0.5), 1e-6) << what;
  EXPECT_LE(at(acc, 0.999), 1e-5) << what;
  EXPECT_LE(acc.back(), 1e-4) << what;
  EXPECT_LE(at(pot, 0.5), 1e-6) << what;
  EXPECT_LE(pot.back(), 1e-5) << what;
  std::printf("  [%s] vs CPU tree over %zu bodies: acc median %.2e p99.9 %.2e max %.2e, pot median %.2e max %.2e\n",
              what, acc.size(), at(acc, 0.5), at(acc, 0.999), acc.back(), at(pot, 0.5), pot.back());
}

void makePlummer(grove::ParticleSystem<user::Body>& bodies, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < n; ++k) {
    double r;
    do r = 1.0 / std::sqrt(std::pow(u(rng), -2.0 / 3.0) - 1.0);
    while (!(r < 10.0));
    const double c = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng), s = std::sqrt(1.0 - c * c);
    user::Body b;
    b.id = k, b.mass = 1.0 / n, b.pos = {r * s * std::cos(phi), r * s * std::sin(phi), r * c};
    bodies.add(b);
  }
}

void drift(grove::ParticleSystem<user::Body>& bodies, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1e-3, 1e-3);
  for (auto& b : bodies) b.pos += grove::Vec3d{d(rng), d(rng), d(rng)};
}

// The engine's index dispatch takes grove's trailing lists_unchanged (the trees test for exactly
// this call), and its plain dispatch and retrieve have FDPS's signatures.
template <class SPJ>
using Gpu = user::cuda::GravityMultiwalkInterface<SPJ>;
template <class SPJ>
constexpr bool kTakesListsUnchanged =
    std::is_invocable_v<typename Gpu<SPJ>::IndexDispatch&, int, int, const user::GravityEPI**, const int*,
                        const std::int32_t**, const int*, const std::int32_t**, const int*, const user::GravityEPJ*,
                        int, const SPJ*, int, bool, bool>;
static_assert(kTakesListsUnchanged<grove::SPJMonopole> && kTakesListsUnchanged<grove::SPJQuadrupole>);
static_assert(std::is_invocable_r_v<int, Gpu<grove::SPJQuadrupole>::PlainDispatch&, int, int, const user::GravityEPI**,
                                    const int*, const user::GravityEPJ**, const int*, const grove::SPJQuadrupole**,
                                    const int*>);
static_assert(std::is_invocable_r_v<int, Gpu<grove::SPJQuadrupole>::Retrieve&, int, int, const int*,
                                    user::GravityForce**>);

template <class SPJ>
class TreeMultiwalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};
using SuperparticleTypes = ::testing::Types<grove::SPJMonopole, grove::SPJQuadrupole>;
TYPED_TEST_SUITE(TreeMultiwalkTest, SuperparticleTypes);

TYPED_TEST(TreeMultiwalkTest, GpuForcesMatchTheTreesCpuKernelsThroughListReuse) {
  constexpr bool kQuad = std::is_same_v<TypeParam, grove::SPJQuadrupole>;
  using Tree = std::conditional_t<kQuad, Trees::Quadrupole, Trees::Monopole>;
  using SpKernel = std::conditional_t<kQuad, user::GravityQuadrupoleKernel, user::GravityMonopoleKernel>;
  const user::GravityMonopoleKernel ep{kEps2};
  const SpKernel sp{kEps2};

  grove::ParticleSystem<user::Body> bodies;
  grove::DomainInfo dinfo;
  makePlummer(bodies, 20000, 17);
  dinfo.decomposeDomainAll(bodies);
  bodies.exchangeParticle(dinfo);
  Tree tree(bodies.size(), 0.5, 8, 256);
  auto engine = user::cuda::makeGravityEngine<TypeParam>(kEps2);

  // MAKE_LIST_FOR_REUSE: index form, two tags (dispatch k before retrieve k - 1).
  tree.calcForceAllAndWriteBack(ep, sp, bodies, dinfo, true, grove::MAKE_LIST_FOR_REUSE);
  const Result cpu_make = resultOf(bodies);
  tree.calcForceAllAndWriteBackMultiWalkIndex(engine->dispatch(), engine->retrieve(), 2, bodies, dinfo, kWalkLimit,
                                              true, grove::MAKE_LIST_FOR_REUSE);
  expectClose(resultOf(bodies), cpu_make, "engine, MAKE_LIST_FOR_REUSE");
  const auto batches = engine->stats().batches;
  EXPECT_GT(batches, 1);
  EXPECT_EQ(engine->stats().lists_kept, batches);

  // REUSE_LIST after the bodies moved: the engine runs on the lists it kept.
  drift(bodies, 3);
  tree.calcForceAllAndWriteBack(ep, sp, bodies, dinfo, true, grove::REUSE_LIST);
  const Result cpu_reuse = resultOf(bodies);
  tree.calcForceAllAndWriteBackMultiWalkIndex(engine->dispatch(), engine->retrieve(), 2, bodies, dinfo, kWalkLimit,
                                              true, grove::REUSE_LIST);
  const Result gpu_reuse = resultOf(bodies);
  expectClose(gpu_reuse, cpu_reuse, "engine, REUSE_LIST");
  EXPECT_EQ(engine->stats().lists_reused, batches);

  // The same step on a fresh engine, which must send the lists: bitwise the same forces.
  auto fresh = user::cuda::makeGravityEngine<TypeParam>(kEps2);
  tree.calcForceAllAndWriteBackMultiWalkIndex(fresh->dispatch(), fresh->retrieve(), 2, bodies, dinfo, kWalkLimit,
                                              true, grove::REUSE_LIST);
  EXPECT_TRUE(bitwiseEqual(resultOf(bodies), gpu_reuse));
  EXPECT_EQ(fresh->stats().lists_reused, 0);

  // New lists: plain form with one tag, the hand-written template in index form with three.
  tree.calcForceAllAndWriteBack(ep, sp, bodies, dinfo);
  const Result cpu = resultOf(bodies);
  tree.calcForceAllAndWriteBackMultiWalk(engine->dispatchPlain(), engine->retrieve(), 1, bodies, dinfo, kWalkLimit);
  expectClose(resultOf(bodies), cpu, "engine, plain form");
  auto raw = user::cuda::makeGravityMultiwalk<TypeParam>(kEps2);
  tree.calcForceAllAndWriteBackMultiWalkIndex(raw->dispatch(), raw->retrieve(), 3, bodies, dinfo, kWalkLimit);
  expectClose(resultOf(bodies), cpu, "template, index form");
}

// The template copies the tree's EPI array and (index form) its whole EPJ array by DMA, once a GPU
// multiwalk has let grove page-lock them, and the engine the EPJ array; a tree made while no hooks
// were installed keeps ordinary memory, which they pack and convert. Both give bitwise the same
// forces.
TYPED_TEST(TreeMultiwalkTest, MultiwalksCopyStraightFromTheTreesPageLockedArraysWithTheSameForces) {
  using Tree = std::conditional_t<std::is_same_v<TypeParam, grove::SPJQuadrupole>, Trees::Quadrupole, Trees::Monopole>;
  grove::ParticleSystem<user::Body> initial;
  grove::DomainInfo dinfo;
  makePlummer(initial, 20000, 29);
  dinfo.decomposeDomainAll(initial);
  initial.exchangeParticle(dinfo);
  // Index form (list kept), a REUSE_LIST step after a drift, then the plain form.
  auto run = [&](user::cuda::GravityMultiwalkInterface<TypeParam>& gpu) {
    grove::ParticleSystem<user::Body> bodies = initial;
    Tree tree(bodies.size(), 0.5, 8, 256);
    std::vector<Result> results;
    tree.calcForceAllAndWriteBackMultiWalkIndex(gpu.dispatch(), gpu.retrieve(), 3, bodies, dinfo, kWalkLimit, true,
                                                grove::MAKE_LIST_FOR_REUSE);
    results.push_back(resultOf(bodies));
    drift(bodies, 5);
    tree.calcForceAllAndWriteBackMultiWalkIndex(gpu.dispatch(), gpu.retrieve(), 3, bodies, dinfo, kWalkLimit, true,
                                                grove::REUSE_LIST);
    results.push_back(resultOf(bodies));
    tree.calcForceAllAndWriteBackMultiWalk(gpu.dispatchPlain(), gpu.retrieve(), 3, bodies, dinfo, kWalkLimit);
    results.push_back(resultOf(bodies));
    return results;
  };
  auto staged_gpu = user::cuda::makeGravityMultiwalk<TypeParam>(kEps2);
  grove::installPageLockHooks({});  // as if no GPU multiwalk had installed them
  const std::vector<Result> staged = run(*staged_gpu);
  EXPECT_EQ(staged_gpu->stats().bytes_direct, 0);
  grove::gpu::enablePageLockedTransfers();
  auto direct_gpu = user::cuda::makeGravityMultiwalk<TypeParam>(kEps2);
  const std::vector<Result> direct = run(*direct_gpu);
  // Every batch's EPI and both index-form steps' EPJ arrays came straight from the tree.
  const std::int64_t epi_bytes = 3 * static_cast<std::int64_t>(initial.size() * 3 * sizeof(float));
  const std::int64_t epj_bytes = 2 * static_cast<std::int64_t>(initial.size() * sizeof(user::GravityEPJ));
  EXPECT_EQ(direct_gpu->stats().bytes_direct, epi_bytes + epj_bytes);
  EXPECT_EQ(direct_gpu->stats().bytes_to_device, staged_gpu->stats().bytes_to_device);
  const char* what[] = {"MAKE_LIST_FOR_REUSE", "REUSE_LIST", "plain form"};
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(bitwiseEqual(direct[k], staged[k])) << what[k];

  // The engine copies the whole EPJ array of each index-form step straight from the tree too.
  grove::installPageLockHooks({});
  auto staged_engine = user::cuda::makeGravityEngine<TypeParam>(kEps2);  // installs the hooks again
  grove::installPageLockHooks({});
  const std::vector<Result> engine_staged = run(*staged_engine);
  EXPECT_EQ(staged_engine->stats().bytes_direct, 0);
  auto direct_engine = user::cuda::makeGravityEngine<TypeParam>(kEps2);
  const std::vector<Result> engine_direct = run(*direct_engine);
  EXPECT_EQ(direct_engine->stats().bytes_direct, epj_bytes);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(bitwiseEqual(engine_direct[k], engine_staged[k])) << "engine, " << what[k];
}

// The FMM tests' system: 20 000 Plummer bodies, order 6, theta 0.5, leaves of 32.
struct FmmOnPlummer {
  grove::ParticleSystem<user::Body> bodies;
  grove::DomainInfo dinfo;
  grove::FmmForce<user::GravityForce, user::GravityEPI, user::GravityEPJ> fmm;

  FmmOnPlummer() {
    makePlummer(bodies, 20000, 5);
    fmm.initialize(bodies.size(), 0.5, 32, 6);
  }
  // The forces with the CPU near-field kernel and the host's far field (written back).
  Result cpuForces() {
    fmm.calcForceAllAndWriteBack(user::GravityMonopoleKernel{kEps2}, bodies, dinfo);
    return resultOf(bodies);
  }
};

}  // namespace

// The fast multipole method's near field on the GPU (pfalcON's split) through the same multiwalk
// hooks, hand-written template and engine, one and several tags: against the FMM with the CPU
// kernel. Only the near field's float summation order differs, so the tree's bounds hold.
TEST(FmmMultiwalk, GpuNearFieldMatchesTheCpuKernel) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  FmmOnPlummer c;
  auto& [bodies, dinfo, fmm] = c;
  const Result cpu = c.cpuForces();
  const std::int64_t cpu_interactions = fmm.statistics().p2p_interactions;
  ASSERT_GT(fmm.statistics().m2l, 0);
  for (const bool engine : {false, true})
    for (const int tag_max : {1, 4}) {
      auto gpu = engine ? user::cuda::makeGravityEngine<grove::SPJMonopole>(kEps2)
                        : user::cuda::makeGravityMultiwalk<grove::SPJMonopole>(kEps2);
      for (auto& b : bodies) b.acc = {}, b.pot = 0.0;
      fmm.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), tag_max, bodies, dinfo, kWalkLimit);
      const std::string what = std::string(engine ? "engine" : "template") + ", tag_max " + std::to_string(tag_max);
      expectClose(resultOf(bodies), cpu, what.c_str());
      EXPECT_EQ(fmm.statistics().p2p_interactions, cpu_interactions) << what;
    }
}


namespace {

std::vector<grove::Vec3d> plummerPositions(int n, std::uint64_t seed, grove::Vec3d shift) {
  grove::ParticleSystem<user::Body> bodies;
  makePlummer(bodies, n, seed);
  std::vector<grove::Vec3d> positions;
  for (const auto& b : bodies) positions.push_back(grove::Vec3d(b.pos) + shift);
  return positions;
}

// The sources of a rank that holds `local` and has received `remote` from another rank, as
// fmm::exchangeLet leaves them: the remote tree's cells after the local ones, its particles after
// the local particles, and some of its cells sent contents-less (every odd split cell of its
// generation `contents_less`, as if far from this rank), so that the directed traversal meets P2P,
// M2L and M2P.
grove::fmm::SourceCells withReceivedTree(const grove::fmm::FmmTree& local, const grove::fmm::FmmTree& remote,
                                         int contents_less = 2) {
  grove::fmm::SourceCells sources = grove::fmm::SourceCells::ofTree(local);
  const int offset = static_cast<int>(local.cells().size());
  const int particles = static_cast<int>(local.positions().size());
  for (int c = 0; c < static_cast<int>(remote.cells().size()); ++c) {
    grove::fmm::FmmCell cell = remote.cells()[static_cast<std::size_t>(c)];
    cell.begin += particles, cell.end += particles;
    if (cell.first_child >= 0) cell.first_child += offset;
    if (cell.parent >= 0) cell.parent += offset;
    if (remote.generationCount() > contents_less && c >= remote.generation(contents_less) &&
        c < remote.generation(contents_less + 1) && c % 2 == 1 && cell.child_count > 0) {
      cell.multipole_only = 1;
      cell.child_count = 0;
      cell.first_child = -1;
    }
    sources.cells.push_back(cell);
  }
  sources.remote_multipoles.assign(remote.multipoles().begin(), remote.multipoles().end());
  sources.remote_roots.push_back(offset);
  return sources;
}

void expectSameLists(const grove::fmm::CsrList& device, const grove::fmm::CsrList& host, const std::string& what) {
  EXPECT_EQ(device.offsets, host.offsets) << what;
  EXPECT_EQ(device.items, host.items) << what;
}

}  // namespace

// The device traversal (Goude & Engblom's breadth-first scheme) against the host's dual tree
// traversal: the same M2L, P2P and M2P lists, item for item, local and received cells, several
// theta and leaf sizes.
TEST(FmmDevice, TraversalGivesTheHostsLists) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const std::vector<grove::Vec3d> a = plummerPositions(20000, 11, {}), b = plummerPositions(7000, 12, {3.0, 0.5, 0.0});
  const std::vector<double> qa(a.size(), 1.0 / 20000), qb(b.size(), 1.0 / 20000);
  const grove::fmm::MultiIndexSet expansion(4);
  grove::fmm::DeviceFarField device;
  for (const int n_leaf : {8, 32})
    for (const double theta : {0.3, 0.5, 0.7}) {
      grove::fmm::FmmTree local, remote;
      local.build(a, qa, n_leaf, expansion);
      remote.build(b, qb, n_leaf, expansion);
      const grove::fmm::SourceCells sources = withReceivedTree(local, remote);
      const int targets = static_cast<int>(local.cells().size());
      const grove::fmm::InteractionLists host = grove::fmm::traverse(sources, targets, theta);
      std::vector<double> phi(a.size());
      std::vector<grove::Vec3d> gradient(a.size());
      EXPECT_GT(host.m2p.size(), 0) << n_leaf << " " << theta;  // the received contents-less cells are met
      // In one start(), then begun on the local cells before the received ones came (startLocal,
      // as FmmForce does before the LET): the same lists, the M2L's two parts merged.
      for (const bool local_first : {false, true}) {
        const std::string what = "n_leaf " + std::to_string(n_leaf) + ", theta " + std::to_string(theta) +
                                 (local_first ? ", startLocal first" : "");
        if (local_first) {
          ASSERT_TRUE(device.startLocal(local, theta, expansion)) << what;
        }
        const grove::fmm::TraversalSummary summary =
            device.start(local, sources, theta, expansion, phi, gradient, true, /*p2p_to_host=*/true);
        device.finish();
        EXPECT_EQ(device.completedLocalStart(), local_first) << what;
        const grove::fmm::InteractionLists lists = device.lists();
        expectSameLists(lists.m2l, host.m2l, what + ", M2L");
        expectSameLists(lists.p2p, host.p2p, what + ", P2P");
        expectSameLists(lists.m2p, host.m2p, what + ", M2P");
        expectSameLists(summary.p2p, host.p2p, what + ", P2P handed to the near field");
        EXPECT_EQ(summary.m2l, host.m2l.size()) << what;
        EXPECT_EQ(summary.m2p, host.m2p.size()) << what;
        EXPECT_EQ(summary.p2p_pairs, host.p2p.size()) << what;
      }
      const std::string what = "n_leaf " + std::to_string(n_leaf) + ", theta " + std::to_string(theta);
      std::printf("  [%s] %lld M2L, %lld P2P, %lld M2P: the host's lists, with and without startLocal\n", what.c_str(),
                  static_cast<long long>(host.m2l.size()), static_cast<long long>(host.p2p.size()),
                  static_cast<long long>(host.m2p.size()));
    }
  // start() completes only the calculation startLocal() began: another theta, or sources that do
  // not begin with the tree's multipoles, are refused, and the engine is free again afterwards.
  grove::fmm::FmmTree local, remote;
  local.build(a, qa, 32, expansion);
  remote.build(b, qb, 32, expansion);
  const grove::fmm::SourceCells sources = withReceivedTree(local, remote);
  std::vector<double> phi(a.size());
  std::vector<grove::Vec3d> gradient(a.size());
  grove::fmm::FmmTree scratch;
  ASSERT_TRUE(device.startLocal(local, 0.5, expansion));
  EXPECT_THROW(device.buildTree(a, qa, 32, expansion, scratch), grove::Error);  // the local M2L reads the tree
  EXPECT_THROW(device.lists(), grove::Error);      // not made yet
  EXPECT_THROW(device.deviceP2p(), grove::Error);
  EXPECT_THROW(device.start(local, sources, 0.6, expansion, phi, gradient, true, true), grove::Error);
  EXPECT_NO_THROW(device.buildTree(a, qa, 32, expansion, scratch));  // the refused start() abandoned it
  ASSERT_TRUE(device.startLocal(local, 0.5, expansion));
  grove::fmm::SourceCells copied = sources;
  const std::vector<double> multipoles(local.multipoles().begin(), local.multipoles().end());
  copied.local_multipoles = multipoles;
  EXPECT_THROW(device.start(local, copied, 0.5, expansion, phi, gradient, true, true), grove::Error);
  EXPECT_NO_THROW(device.buildTree(a, qa, 32, expansion, scratch));
  EXPECT_THROW(device.startLocal(local, 1.5, expansion), grove::Error);
  ASSERT_TRUE(device.startLocal(local, 0.5, expansion));
  device.abandon();  // and a new calculation starts whole
  const grove::fmm::TraversalSummary summary = device.start(local, sources, 0.5, expansion, phi, gradient, true, true);
  device.finish();
  EXPECT_FALSE(device.completedLocalStart());
  const grove::fmm::InteractionLists host = grove::fmm::traverse(sources, static_cast<int>(local.cells().size()), 0.5);
  EXPECT_EQ(summary.m2l, host.m2l.size());
  EXPECT_EQ(summary.p2p_pairs, host.p2p.size());
  expectSameLists(device.lists().m2l, host.m2l, "after the refusals");
}

// The tree built on the device (DeviceFarField::buildTree) against FmmTree::build: the same cells,
// generations, order, centres, radii and multipoles, bit for bit, whatever the particles: a Plummer
// sphere, a cluster of coincident bodies (a leaf that cannot split, larger than a block), signed
// and zero charges (the centre of |q|, and the mean position where every charge is zero), one body,
// none. Then the same engine's far field from the tree it built (its positions and multipoles kept
// on the device) is bitwise the far field from the host's tree (uploaded).
namespace {
// Bit patterns, not values: -0.0 and 0.0 differ here.
bool sameBits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
bool sameBits(const grove::Vec3d& a, const grove::Vec3d& b) {
  return sameBits(a.x, b.x) && sameBits(a.y, b.y) && sameBits(a.z, b.z);
}
template <class T>
bool sameBytes(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

void expectSameTree(const grove::fmm::FmmTree& device, const grove::fmm::FmmTree& host, const std::string& what) {
  ASSERT_EQ(device.cells().size(), host.cells().size()) << what;
  ASSERT_EQ(device.generationCount(), host.generationCount()) << what;
  for (int g = 0; g <= host.generationCount(); ++g) EXPECT_EQ(device.generation(g), host.generation(g)) << what;
  std::size_t differing = 0;
  for (std::size_t c = 0; c < host.cells().size(); ++c) {
    const grove::fmm::FmmCell &d = device.cells()[c], &h = host.cells()[c];
    const bool same = sameBits(d.center, h.center) && sameBits(d.radius, h.radius) && sameBits(d.charge, h.charge) &&
                      d.begin == h.begin &&
                      d.end == h.end && d.first_child == h.first_child && d.child_count == h.child_count &&
                      d.parent == h.parent && d.multipole_only == h.multipole_only;
    if (!same && differing++ < 3)
      ADD_FAILURE() << what << ": cell " << c << " differs: centre " << d.center.x << " / " << h.center.x << ", radius "
                    << d.radius << " / " << h.radius << ", particles [" << d.begin << ", " << d.end << ") / ["
                    << h.begin << ", " << h.end << ")";
  }
  EXPECT_EQ(differing, 0u) << what;
  EXPECT_TRUE(std::ranges::equal(device.order(), host.order())) << what;
  EXPECT_TRUE(sameBytes(device.positions(), host.positions())) << what;
  EXPECT_TRUE(sameBytes(device.charges(), host.charges())) << what;
  EXPECT_TRUE(sameBytes(device.multipoles(), host.multipoles())) << what << ": multipoles";
  EXPECT_EQ(device.stride(), host.stride()) << what;
  EXPECT_EQ(device.leafCount(), host.leafCount()) << what;
  EXPECT_TRUE(sameBits(device.bounds().low, host.bounds().low)) << what;
  EXPECT_TRUE(sameBits(device.bounds().high, host.bounds().high)) << what;
}
}  // namespace

TEST(FmmDevice, TreeBuiltOnTheDeviceIsTheHosts) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  grove::fmm::DeviceFarField device;
  struct Case {
    std::string name;
    std::vector<grove::Vec3d> positions;
    std::vector<double> charges;
  };
  std::vector<Case> cases;
  {
    std::vector<grove::Vec3d> x = plummerPositions(20000, 31, {});
    cases.push_back({"Plummer 20000", x, std::vector<double>(x.size(), 1.0 / 20000)});
    // 300 coincident bodies in the middle of it (a leaf larger than the moments' block of 256
    // threads), and charges of both signs.
    for (int i = 0; i < 300; ++i) x.push_back({0.125, -0.25, 0.5});
    std::vector<double> q(x.size());
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = (i % 3 == 0 ? -1.0 : 1.0) * (1.0 + 1e-3 * static_cast<double>(i % 17));
    cases.push_back({"signed charges, 300 coincident bodies", x, q});
    cases.push_back({"zero charges", std::vector<grove::Vec3d>(x.begin(), x.begin() + 3000), std::vector<double>(3000, 0.0)});
  }
  cases.push_back({"one body", {{1.0, 2.0, 3.0}}, {2.0}});
  cases.push_back({"no body", {}, {}});
  for (const int order : {1, 4, 8}) {
    const grove::fmm::MultiIndexSet expansion(order);
    for (const int n_leaf : {1, 16, 64})
      for (const Case& c : cases) {
        const std::string what = c.name + ", order " + std::to_string(order) + ", n_leaf " + std::to_string(n_leaf);
        grove::fmm::FmmTree host, built;
        host.build(c.positions, c.charges, n_leaf, expansion);
        device.buildTree(c.positions, c.charges, n_leaf, expansion, built);
        expectSameTree(built, host, what);
        EXPECT_NE(built.buildId(), host.buildId()) << what;
      }
  }
  const Case& plummer = cases.front();
  std::printf("  [%s] %zu cells bit for bit at orders 1, 4, 8 and n_leaf 1, 16, 64; so are the other %zu cases\n",
              plummer.name.c_str(), [&] {
                grove::fmm::FmmTree t;
                t.build(plummer.positions, plummer.charges, 16, grove::fmm::MultiIndexSet(4));
                return t.cells().size();
              }(), cases.size() - 1);

  // The far field from the tree built here (nothing uploaded) and from the host's (uploaded).
  const grove::fmm::MultiIndexSet expansion(6);
  grove::fmm::FmmTree host, built;
  host.build(plummer.positions, plummer.charges, 32, expansion);
  device.buildTree(plummer.positions, plummer.charges, 32, expansion, built);
  std::vector<double> phi_built(plummer.positions.size()), phi_host(plummer.positions.size());
  std::vector<grove::Vec3d> gradient_built(phi_built.size()), gradient_host(phi_built.size());
  auto farField = [&](const grove::fmm::FmmTree& tree, std::vector<double>& phi, std::vector<grove::Vec3d>& gradient) {
    grove::fmm::SourceCells sources = grove::fmm::SourceCells::ofTree(tree);
    device.start(tree, sources, 0.5, expansion, phi, gradient, true, /*p2p_to_host=*/true);
    device.finish();
  };
  farField(built, phi_built, gradient_built);
  farField(host, phi_host, gradient_host);
  EXPECT_EQ(phi_built, phi_host);
  EXPECT_EQ(gradient_built, gradient_host);
  // A host tree in between: the engine uploads it, and the tree it built before is uploaded too.
  farField(built, phi_built, gradient_built);
  EXPECT_EQ(phi_built, phi_host);
  EXPECT_GT(std::abs(phi_host[0]), 0.0);
  // The same tree object built here, then rebuilt on the host from other bodies: its new build is
  // uploaded, not the device's copy of the old one.
  const std::vector<grove::Vec3d> other = plummerPositions(5000, 32, {0.5, 0.0, 0.0});
  const std::vector<double> other_q(other.size(), 1.0 / 5000);
  grove::fmm::FmmTree reused, reference;
  device.buildTree(plummer.positions, plummer.charges, 32, expansion, reused);
  reused.build(other, other_q, 32, expansion);
  reference.build(other, other_q, 32, expansion);
  std::vector<double> phi_reused(other.size()), phi_reference(other.size());
  std::vector<grove::Vec3d> gradient_reused(other.size()), gradient_reference(other.size());
  farField(reused, phi_reused, gradient_reused);
  farField(reference, phi_reference, gradient_reference);
  EXPECT_EQ(phi_reused, phi_reference);
  EXPECT_EQ(gradient_reused, gradient_reference);
}

// The device far field (M2L, L2L, L2P, M2P) against the host's for the same lists: the same sums
// in another order, so equal to rounding.
namespace {
void expectDeviceFarFieldAsTheHosts(int n_local, int n_remote, int contents_less, std::initializer_list<int> orders) {
  const std::vector<grove::Vec3d> a = plummerPositions(n_local, 21, {}), b = plummerPositions(n_remote, 22, {3.0, 0.0, 0.5});
  const std::vector<double> qa(a.size(), 1.0 / n_local), qb(b.size(), 1.0 / n_local);
  grove::fmm::DeviceFarField device;
  for (const int order : orders) {
    const grove::fmm::MultiIndexSet expansion(order);
    grove::fmm::FmmTree local, remote;
    local.build(a, qa, 32, expansion);
    remote.build(b, qb, 32, expansion);
    const grove::fmm::SourceCells sources = withReceivedTree(local, remote, contents_less);
    const grove::fmm::InteractionLists lists = grove::fmm::traverse(sources, static_cast<int>(local.cells().size()), 0.5);
    ASSERT_GT(lists.m2l.size(), 0);
    ASSERT_GT(lists.m2p.size(), 0);
    std::size_t longest_m2p = 0;  // tasks of one source cut this target's list
    for (int t = 0; t < static_cast<int>(local.cells().size()); ++t)
      longest_m2p = std::max(longest_m2p, lists.m2p.of(t).size());
    ASSERT_GE(longest_m2p, 2u);
    std::vector<double> phi_host(a.size()), phi_device(a.size());
    std::vector<grove::Vec3d> gradient_host(a.size()), gradient_device(a.size());
    grove::fmm::evaluateFarField(local, sources, lists, expansion, phi_host, gradient_host);
    double rms = 0.0;
    for (const auto& g : gradient_host) rms += grove::norm2(g);
    rms = std::sqrt(rms / static_cast<double>(a.size()));
    // In one start(), then begun on the local cells (startLocal: the local and received cells'
    // M2L in two sums); with the M2P lists in tasks of 32 sources (the default), of 2 (a target of
    // 3 sources gets a task of 2 and a shorter one) and of 1 (every target with several sources
    // then sums its tasks' partial sums).
    for (const auto& [local_first, m2p_task] : {std::pair{false, 32}, {true, 32}, {false, 2}, {true, 1}}) {
      device.setM2pSourcesPerTask(m2p_task);
      std::ranges::fill(phi_device, std::numeric_limits<double>::quiet_NaN());
      std::ranges::fill(gradient_device, grove::Vec3d(std::numeric_limits<double>::quiet_NaN()));
      if (local_first) {
        ASSERT_TRUE(device.startLocal(local, 0.5, expansion));
      }
      device.start(local, sources, 0.5, expansion, phi_device, gradient_device, true, /*p2p_to_host=*/true);
      const grove::fmm::FarFieldSeconds seconds = device.finish();
      EXPECT_EQ(device.completedLocalStart(), local_first);
      // The largest difference, NaN (a value not written: the arrays start as NaN) once met.
      auto worse = [](double so_far, double d) {
        return std::isnan(so_far) ? so_far : (std::isnan(d) || d > so_far ? d : so_far);
      };
      double phi_max = 0.0, gradient_max = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        phi_max = worse(phi_max, std::abs(phi_device[i] - phi_host[i]) / std::abs(phi_host[i]));
        gradient_max = worse(gradient_max, grove::norm(gradient_device[i] - gradient_host[i]) /
                                               (grove::norm(gradient_host[i]) + 1e-3 * rms));
      }
      EXPECT_LE(phi_max, 1e-12) << "order " << order << (local_first ? ", startLocal first" : "") << ", M2P tasks of "
                                << m2p_task;
      EXPECT_LE(gradient_max, 1e-9) << "order " << order << (local_first ? ", startLocal first" : "")
                                    << ", M2P tasks of " << m2p_task;
      std::printf("  [%d bodies, order %d%s, M2P tasks of %d] %lld M2L, %lld M2P (at most %zu a leaf): phi max rel "
                  "diff %.2e, gradient %.2e; device M2L %.3f ms, downward %.3f ms\n",
                  n_local, order, local_first ? ", startLocal first" : "", m2p_task,
                  static_cast<long long>(lists.m2l.size()),
                  static_cast<long long>(lists.m2p.size()), longest_m2p, phi_max, gradient_max, 1e3 * seconds.m2l,
                  1e3 * seconds.downward);
    }
  }
}
}  // namespace

TEST(FmmDevice, FarFieldMatchesTheHosts) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  expectDeviceFarFieldAsTheHosts(20000, 5000, 2, {1, 2, 4, 6, 8});
  grove::fmm::DeviceFarField device;
  EXPECT_EQ(device.m2pSourcesPerTask(), 32);
  EXPECT_THROW(device.setM2pSourcesPerTask(0), grove::Error);
}

// The same on a tree small enough for compute-sanitizer's memcheck and racecheck (gpu_check.sh's
// GROVE_COMPUTE_SANITIZER with GROVE_SANITIZER_FILTER=FmmDevice.Small*).
TEST(FmmDevice, SmallFarFieldMatchesTheHosts) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  expectDeviceFarFieldAsTheHosts(1500, 500, 1, {3, 8});
}

// The periodic lattice's field added by the device far field's last kernel (offerLattice) against
// the host's far field plus PeriodicLattice::evaluate at every particle, in double: the same sums
// but for fused multiply-adds. Bodies fill the unit box, so every one of its 64 parts holds some.
// An offer holds for one calculation, and nullptr withdraws one.
TEST(FmmDevice, LatticeFieldMatchesTheHosts) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<grove::Vec3d> x(20000);
  for (auto& p : x) p = grove::Vec3d(u(rng), u(rng), u(rng));
  const std::vector<double> q(x.size(), 1.0 / static_cast<double>(x.size()));
  const grove::fmm::MultiIndexSet expansion(6);
  grove::fmm::FmmTree tree;
  tree.build(x, q, 32, expansion);
  grove::fmm::SourceCells sources = grove::fmm::SourceCells::ofTree(tree);
  // The box's multipole about its centre stands in for every rank's (any multipole tests the
  // evaluation).
  const grove::Vec3d centre(0.5, 0.5, 0.5);
  std::vector<double> box_multipole(sources.stride, 0.0);
  expansion.shiftMultipole(tree.multipoles().subspan(0, sources.stride), centre - tree.cells()[0].center,
                           box_multipole);
  grove::fmm::PeriodicLattice lattice(expansion, 1.0, 12, 2);
  lattice.setBox(box_multipole, centre);

  const std::size_t n = x.size();
  std::vector<double> phi_host(n), phi_device(n), phi_open(n);
  std::vector<grove::Vec3d> gradient_host(n), gradient_device(n), gradient_open(n);
  const grove::fmm::InteractionLists lists = grove::fmm::traverse(sources, static_cast<int>(tree.cells().size()), 0.5);
  grove::fmm::evaluateFarField(tree, sources, lists, expansion, phi_host, gradient_host);
  for (std::size_t k = 0; k < n; ++k) lattice.evaluate(tree.positions()[k], &phi_host[k], &gradient_host[k]);
  grove::fmm::DeviceFarField device;
  EXPECT_TRUE(device.offerLattice(&lattice));
  device.start(tree, sources, 0.5, expansion, phi_device, gradient_device, true, /*p2p_to_host=*/true);
  device.finish();
  // The offer held for that calculation only: the next one, without an offer, adds no lattice.
  device.start(tree, sources, 0.5, expansion, phi_open, gradient_open, true, /*p2p_to_host=*/true);
  device.finish();
  std::vector<double> phi_withdrawn(n);
  std::vector<grove::Vec3d> gradient_withdrawn(n);
  EXPECT_TRUE(device.offerLattice(&lattice));
  EXPECT_FALSE(device.offerLattice(nullptr));
  device.start(tree, sources, 0.5, expansion, phi_withdrawn, gradient_withdrawn, true, /*p2p_to_host=*/true);
  device.finish();
  EXPECT_EQ(phi_withdrawn, phi_open);

  double rms = 0.0, pot_rms = 0.0, lattice_rms = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    rms += grove::norm2(gradient_host[k]), pot_rms += phi_host[k] * phi_host[k];
    lattice_rms += grove::norm2(gradient_device[k] - gradient_open[k]);
  }
  rms = std::sqrt(rms / static_cast<double>(n));
  pot_rms = std::sqrt(pot_rms / static_cast<double>(n));
  lattice_rms = std::sqrt(lattice_rms / static_cast<double>(n));
  double gradient_max = 0.0, phi_max = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    gradient_max = std::max(gradient_max, grove::norm(gradient_device[k] - gradient_host[k]) / rms);
    phi_max = std::max(phi_max, std::abs(phi_device[k] - phi_host[k]) / pot_rms);
  }
  EXPECT_LE(gradient_max, 1e-12);
  EXPECT_LE(phi_max, 1e-12);
  // The lattice's field is a sizeable part of the whole (the box's images pull as hard as its own
  // far cells), so leaving it out would show.
  EXPECT_GT(lattice_rms, 1e-3 * rms);
  std::printf("  [lattice on the device] vs host: gradient max diff / rms %.2e, phi %.2e; lattice's rms gradient "
              "%.2e of the total's\n",
              gradient_max, phi_max, lattice_rms / rms);
}

// FmmForce with its far field on the device: with the CPU near-field kernel (the far field running
// beside it) against the host's far field, and with the GPU near field through the multiwalk hooks
// (both on the device, side by side) against the CPU kernel.
TEST(FmmDevice, FmmForceWithTheDeviceFarField) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  FmmOnPlummer c;
  auto& [bodies, dinfo, fmm] = c;
  const Result host = c.cpuForces();
  const grove::fmm::FmmStatistics host_stats = fmm.statistics();
  EXPECT_STREQ(host_stats.far_field_engine, "host");

  fmm.setFarFieldEngine(std::make_shared<grove::fmm::DeviceFarField>());
  fmm.calcForceAllAndWriteBack(user::GravityMonopoleKernel{kEps2}, bodies, dinfo);
  const Result device = resultOf(bodies);
  EXPECT_STREQ(fmm.statistics().far_field_engine, "device");
  EXPECT_TRUE(fmm.statistics().overlapped);
  EXPECT_EQ(fmm.statistics().m2l, host_stats.m2l);
  EXPECT_EQ(fmm.statistics().p2p_interactions, host_stats.p2p_interactions);
  double acc_max = 0.0, pot_max = 0.0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    acc_max = std::max(acc_max, grove::norm(device.acc[i] - host.acc[i]) / grove::norm(host.acc[i]));
    pot_max = std::max(pot_max, std::abs(device.pot[i] - host.pot[i]) / std::abs(host.pot[i]));
  }
  EXPECT_LE(acc_max, 1e-9);
  EXPECT_LE(pot_max, 1e-12);
  std::printf("  [device far field, CPU near field] vs host far field: acc max rel diff %.2e, pot %.2e\n", acc_max,
              pot_max);

  auto gpu = user::cuda::makeGravityEngine<grove::SPJMonopole>(kEps2);
  for (auto& body : bodies) body.acc = {}, body.pot = 0.0;
  fmm.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), 4, bodies, dinfo, kWalkLimit);
  expectClose(resultOf(bodies), host, "device far field beside the engine's near field");
  EXPECT_EQ(fmm.statistics().p2p_interactions, host_stats.p2p_interactions);
}

// A periodic box (PERIODIC_XYZ, the near block's images as received trees): the device far field
// meets the images' roots as it meets other ranks', and adds the lattice's field in its last kernel
// where the host engine's caller adds it on the host, so its forces are the host far field's to
// rounding.
TEST(FmmDevice, PeriodicBoxWithTheDeviceFarField) {
  if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  grove::ParticleSystem<user::Body> bodies;
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 20000; ++k) {
    user::Body b;
    b.id = k;
    b.mass = 1.0 / 20000;
    b.pos = grove::Vec3d(u(rng), u(rng), u(rng));
    bodies.add(b);
  }
  grove::DomainInfo dinfo;
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain(grove::Vec3d(0.0), grove::Vec3d(1.0));
  grove::FmmForce<user::GravityForce, user::GravityEPI, user::GravityEPJ> fmm(bodies.size(), 0.4, 32, 6);
  fmm.calcForceAllAndWriteBack(user::GravityMonopoleKernel{kEps2}, bodies, dinfo);
  const Result host = resultOf(bodies);
  const grove::fmm::FmmStatistics host_stats = fmm.statistics();
  ASSERT_GT(host_stats.let.cells_received, 0);
  ASSERT_GT(host_stats.lattice_seconds, 0.0);
  EXPECT_FALSE(host_stats.lattice_on_engine);
  EXPECT_FALSE(host_stats.local_before_let);  // the host engine declines startLocal
  fmm.setFarFieldEngine(std::make_shared<grove::fmm::DeviceFarField>());
  fmm.calcForceAllAndWriteBack(user::GravityMonopoleKernel{kEps2}, bodies, dinfo);
  const Result device = resultOf(bodies);
  EXPECT_STREQ(fmm.statistics().far_field_engine, "device");
  EXPECT_TRUE(fmm.statistics().lattice_on_engine);
  EXPECT_TRUE(fmm.statistics().local_before_let);  // the images' LET came after the local M2L began
  EXPECT_EQ(fmm.statistics().m2l, host_stats.m2l);
  EXPECT_EQ(fmm.statistics().m2p, host_stats.m2p);
  EXPECT_EQ(fmm.statistics().p2p_interactions, host_stats.p2p_interactions);
  // Relative to the rms force and potential: a periodic box's forces nearly cancel at some bodies,
  // and its potential has zero mean.
  double rms = 0.0, pot_rms = 0.0;
  for (std::size_t i = 0; i < host.acc.size(); ++i)
    rms += grove::norm2(host.acc[i]), pot_rms += host.pot[i] * host.pot[i];
  rms = std::sqrt(rms / static_cast<double>(host.acc.size()));
  pot_rms = std::sqrt(pot_rms / static_cast<double>(host.acc.size()));
  // The largest differences from the host far field's forces, over the rms force and potential.
  auto largestDifferences = [&](const Result& got) {
    std::pair<double, double> largest{0.0, 0.0};
    for (std::size_t i = 0; i < host.acc.size(); ++i) {
      largest.first = std::max(largest.first, grove::norm(got.acc[i] - host.acc[i]) / rms);
      largest.second = std::max(largest.second, std::abs(got.pot[i] - host.pot[i]) / pot_rms);
    }
    return largest;
  };
  const auto [acc_max, pot_max] = largestDifferences(device);
  EXPECT_LE(acc_max, 1e-9);
  EXPECT_LE(pot_max, 1e-9);
  std::printf("  [periodic box, device far field] vs host far field: acc max diff / rms %.2e, pot %.2e; "
              "%lld M2L, LET cells %lld\n",
              acc_max, pot_max, static_cast<long long>(host_stats.m2l),
              static_cast<long long>(host_stats.let.cells_received));

  // The near field on the GPU too, through the multiwalk hooks: the images' particles are indexed
  // in the step's EPJ array as other ranks' are. Only the float near field's rounding differs
  // from the CPU kernel's, and it is relative to the sums the kernels form, which a periodic
  // box's small forces and zero-mean potential do not show: the scale is the same bodies' open
  // box (its rms force and potential). Measured: 1.8e-6 and 1.6e-6 of the open box's, 1.9e-5 and
  // 3.4e-4 of the periodic box's.
  grove::FmmForce<user::GravityForce, user::GravityEPI, user::GravityEPJ> open_fmm(bodies.size(), 0.4, 32, 6);
  open_fmm.calcForceAllAndWriteBack(user::GravityMonopoleKernel{kEps2}, bodies, grove::DomainInfo{});
  const Result open = resultOf(bodies);
  double open_rms = 0.0, open_pot_rms = 0.0;
  for (std::size_t i = 0; i < open.acc.size(); ++i)
    open_rms += grove::norm2(open.acc[i]), open_pot_rms += open.pot[i] * open.pot[i];
  open_rms = std::sqrt(open_rms / static_cast<double>(open.acc.size()));
  open_pot_rms = std::sqrt(open_pot_rms / static_cast<double>(open.acc.size()));
  auto gpu = user::cuda::makeGravityEngine<grove::SPJMonopole>(kEps2);
  fmm.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), 4, bodies, dinfo, kWalkLimit);
  const Result both = resultOf(bodies);
  EXPECT_EQ(fmm.statistics().p2p_interactions, host_stats.p2p_interactions);
  const auto [both_acc, both_pot] = largestDifferences(both);
  const double acc_of_open = both_acc * rms / open_rms, pot_of_open = both_pot * pot_rms / open_pot_rms;
  EXPECT_LE(acc_of_open, 1e-5);
  EXPECT_LE(pot_of_open, 1e-5);
  std::printf("  [periodic box, device far field and GPU near field] vs CPU: max differences %.2e (acc) and %.2e "
              "(pot) of the periodic rms, %.2e and %.2e of the open box's\n",
              both_acc, both_pot, acc_of_open, pot_of_open);
}
