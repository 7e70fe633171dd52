// The GPU-resident short-range tree (grove/force/resident_tree_short.cuh) against brute
// force: every particle's neighbour set equals the O(N^2) search exactly, in the three modes, for
// uniform and clustered particles with search radii spanning 30x, with open and periodic axes;
// the kernels' sums (pairwise, neighbour-set and cooperative forms) equal the host's over the brute-force
// sets, shifted images included; REUSE_LIST evaluates the kept lists with refreshed particles;
// builds between sorts (setSortEvery) refit the last sort's cells and stay exact; a second tree
// evaluates another's lists while they hold and searches itself when not; bad input is refused
// with a clear error. Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "grove/domain/domain_info.hpp"
#include "grove/force/resident_tree_short.cuh"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/for_each.cuh"
#include "resident_short_setup.cuh"

namespace {

using namespace resident_short_test;

class ResidentShortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

const char* nameOf(SearchMode m) {
  return m == SearchMode::GATHER ? "gather" : m == SearchMode::SCATTER ? "scatter" : "symmetry";
}

// Exact sets: the device's against brute force, particle by particle. Returns the pairs.
template <SearchMode M, class T>
std::int64_t expectSetsEqual(const T& tree, const std::vector<std::vector<std::int64_t>>& expected) {
  auto found = deviceSets(tree);
  EXPECT_EQ(found.size(), expected.size());
  std::int64_t pairs = 0;
  for (std::size_t i = 0; i < std::min(found.size(), expected.size()); ++i) {
    auto want = expected[i];
    std::sort(want.begin(), want.end());
    std::sort(found[i].begin(), found[i].end());
    EXPECT_EQ(found[i], want) << "particle " << i;
    if (found[i] != want) break;  // one particle's sets are enough to read
    pairs += static_cast<std::int64_t>(want.size());
  }
  EXPECT_EQ(tree.profile().neighbours, pairs);
  return pairs;
}

struct ScaleRadii {
  double factor;
  GROVE_HOST_DEVICE void operator()(Particle& p) const { p.r *= factor; }
};

// Build, search and both kernel forms for one configuration, against brute force; each of the
// search's forms: the first search counts, then writes (two walks); the second writes into slots
// of the learnt capacity (one walk); after the radii grow by 1.4 the slots overflow and the walk
// runs again in larger ones. Each of 1, 2, 4 and 8 threads per particle in the walk, and in the
// kernel through NeighbourSet::reduce (cooperative sets).
template <SearchMode M>
void checkAgainstBruteForce(bool clustered, grove::BoundaryCondition bc, int lanes) {
  const std::string what = std::string(nameOf(M)) + (clustered ? ", clustered" : ", uniform") + ", boundary " +
                           std::to_string(static_cast<int>(bc)) + ", " + std::to_string(lanes) +
                           " lanes per particle";
  SCOPED_TRACE(what);
  // 4001: the last warp is partly filled at every thread count (a particle's threads beyond the
  // last particle leave together).
  auto particles = makeParticles(4001, clustered, 0.01, clustered ? 11 : 5);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(particles);
  Tree<M> tree(8, psys.policy(), lanes);
  tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo);
  EXPECT_EQ(tree.profile().search_walks, 2);
  EXPECT_EQ(tree.profile().search_lanes, lanes);

  auto expected = bruteForce<M>(particles, bc);
  expectSetsEqual<M>(tree, expected);
  const auto [r_min, r_max] = std::minmax_element(particles.begin(), particles.end(),
                                                  [](const auto& a, const auto& b) { return a.r < b.r; });
  EXPECT_GT(r_max->r, 25.0 * r_min->r) << "the radii span 30x";
  if (M == SearchMode::GATHER) {  // a gather set grows with its own radius cubed
    std::size_t smallest = SIZE_MAX, largest = 0;
    for (const auto& e : expected) smallest = std::min(smallest, e.size()), largest = std::max(largest, e.size());
    EXPECT_GT(largest, 20 * smallest) << "radii spanning 30x give very different gather sets";
  }

  // Sums, written back: against the host's over the brute-force sets.
  auto check_sums = [&](const std::vector<Particle>& after, const char* form) {
    SCOPED_TRACE(form);
    for (const auto& p : after) {
      const auto id = static_cast<std::size_t>(p.id);
      const NeighbourSums want = hostSums(particles[id], expected[id], particles, bc);
      ASSERT_EQ(p.found.count, want.count) << "particle " << p.id;
      ASSERT_EQ(p.found.id_sum, want.id_sum) << "particle " << p.id;
      const double scale = std::max(1.0, std::abs(want.weight));
      ASSERT_NEAR(p.found.weight, want.weight, 1e-12 * scale) << "particle " << p.id;
      for (double c : {p.found.offset.x - want.offset.x, p.found.offset.y - want.offset.y,
                       p.found.offset.z - want.offset.z})
        ASSERT_LT(std::abs(c), 1e-12 * std::max<double>(1.0, want.count)) << "particle " << p.id;
    }
  };
  check_sums(psys.download(), "pairwise");
  tree.calcForceAllAndWriteBack(psys, grove::gpu::withNeighbourSets(SetKernel{}), dinfo);
  EXPECT_EQ(tree.profile().search_walks, 1) << "slots of the learnt capacity";
  EXPECT_GT(tree.profile().slot_capacity, 0);
  expectSetsEqual<M>(tree, expected);
  check_sums(psys.download(), "neighbour sets");
  tree.calcForceAllAndWriteBack(psys, grove::gpu::withCooperativeNeighbourSets(ReducingSetKernel{}), dinfo);
  EXPECT_EQ(tree.profile().kernel_lanes, lanes) << "as many threads per particle as the search";
  check_sums(psys.download(), "cooperative neighbour sets");

  // Larger radii (below half the period still): the slots overflow, the walk runs again.
  grove::gpu::forEach(psys.policy(), psys, ScaleRadii{1.4});
  for (auto& p : particles) p.r *= 1.4;
  tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo);
  EXPECT_GE(tree.profile().search_walks, 2) << "the slots overflowed";
  expected = bruteForce<M>(particles, bc);
  expectSetsEqual<M>(tree, expected);
  check_sums(psys.download(), "pairwise, larger radii");
}

constexpr int kLanes[] = {1, 2, 4, 8};

TEST_F(ResidentShortTest, NeighbourSetsEqualBruteForceGather) {
  int config = 0;
  for (bool clustered : {false, true})
    for (auto bc : {grove::BoundaryCondition::OPEN, grove::BoundaryCondition::PERIODIC_X,
                    grove::BoundaryCondition::PERIODIC_XY, grove::BoundaryCondition::PERIODIC_XYZ})
      checkAgainstBruteForce<SearchMode::GATHER>(clustered, bc, kLanes[config++ % 4]);
}

TEST_F(ResidentShortTest, NeighbourSetsEqualBruteForceScatter) {
  int config = 1;
  for (bool clustered : {false, true})
    for (auto bc : {grove::BoundaryCondition::OPEN, grove::BoundaryCondition::PERIODIC_Y,
                    grove::BoundaryCondition::PERIODIC_XZ, grove::BoundaryCondition::PERIODIC_XYZ})
      checkAgainstBruteForce<SearchMode::SCATTER>(clustered, bc, kLanes[config++ % 4]);
}

TEST_F(ResidentShortTest, NeighbourSetsEqualBruteForceSymmetry) {
  int config = 2;
  for (bool clustered : {false, true})
    for (auto bc : {grove::BoundaryCondition::OPEN, grove::BoundaryCondition::PERIODIC_Z,
                    grove::BoundaryCondition::PERIODIC_YZ, grove::BoundaryCondition::PERIODIC_XYZ})
      checkAgainstBruteForce<SearchMode::SYMMETRY>(clustered, bc, kLanes[config++ % 4]);
}

// A particle system keeps its order through REUSE_LIST; the refreshed weights enter the sums,
// the kept sets stay.
struct DoubleWeight {
  GROVE_HOST_DEVICE void operator()(Particle& p) const { p.w *= 2.0; }
};

TEST_F(ResidentShortTest, ReuseListEvaluatesKeptListsWithRefreshedParticles) {
  const auto particles = makeParticles(3000, true, 0.01, 21);
  const grove::DomainInfo dinfo = unitBox(grove::BoundaryCondition::PERIODIC_XYZ);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(particles);
  Tree<SearchMode::SYMMETRY> tree(8, psys.policy());
  tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo, grove::MAKE_LIST_FOR_REUSE);
  const auto first = psys.download();
  const auto lists = tree.neighbourList().toHost(psys.stream());
  grove::gpu::forEach(psys.policy(), psys, DoubleWeight{});
  tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo, grove::REUSE_LIST);
  EXPECT_EQ(tree.profile().search, 0.0);
  EXPECT_EQ(tree.profile().search_walks, 0);
  EXPECT_EQ(tree.neighbourList().toHost(psys.stream()), lists);
  const auto second = psys.download();
  ASSERT_EQ(second.size(), first.size());
  for (std::size_t k = 0; k < first.size(); ++k) {
    ASSERT_EQ(second[k].id, first[k].id) << "REUSE_LIST must not reorder";
    EXPECT_EQ(second[k].found.count, first[k].found.count);
    EXPECT_NEAR(second[k].found.weight, 2.0 * first[k].found.weight, 1e-12 * std::abs(first[k].found.weight));
  }
}

// With a skin the lists are kept while the particles move little (2 d + g <= skin) and rebuilt
// when they moved more; either way the kernels, which filter by distance, see every neighbour.
template <SearchMode M>
void checkSkin() {
  SCOPED_TRACE(nameOf(M));
  const auto bc = grove::BoundaryCondition::PERIODIC_XYZ;
  auto particles = makeParticles(3000, true, 0.01, 17);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(particles);
  Tree<M> tree(8, psys.policy());
  tree.setSkin(0.02);
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    const auto expected = bruteForce<M>(particles, bc);
    auto found = deviceSets(tree);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      std::sort(found[i].begin(), found[i].end());
      for (std::int64_t id : expected[i])
        ASSERT_TRUE(std::binary_search(found[i].begin(), found[i].end(), id)) << "particle " << i << " misses " << id;
    }
    for (const auto& p : psys.download()) {
      const auto id = static_cast<std::size_t>(p.id);
      const NeighbourSums want = hostSums(particles[id], expected[id], particles, bc);
      ASSERT_EQ(p.found.count, want.count) << "particle " << p.id;
      ASSERT_EQ(p.found.id_sum, want.id_sum) << "particle " << p.id;
      ASSERT_NEAR(p.found.weight, want.weight, 1e-12 * std::max(1.0, std::abs(want.weight))) << "particle " << p.id;
    }
  };
  tree.calcForceAllAndWriteBack(psys, FilteredPairKernel<M>{}, dinfo, grove::MAKE_LIST_FOR_REUSE);
  check("searched");
  std::int64_t exact_pairs = 0;
  for (const auto& e : bruteForce<M>(particles, bc)) exact_pairs += static_cast<std::int64_t>(e.size());
  EXPECT_GT(tree.profile().neighbours, exact_pairs) << "the skin adds particles beyond reach";

  // Up to 0.004 per axis: d <= 0.0069, 2 d < 0.02.
  const Jitter small{0.004, 1, grove::WrapIntoRootDomain::of(dinfo)};
  grove::gpu::forEach(psys.policy(), psys, small);
  for (auto& p : particles) small(p);
  tree.calcForceAllAndWriteBack(psys, FilteredPairKernel<M>{}, dinfo, grove::REUSE_LIST);
  EXPECT_EQ(tree.profile().rebuilt_for_skin, 0);
  EXPECT_EQ(tree.profile().search_walks, 0);
  EXPECT_GT(tree.profile().skin_drift, 0.0);
  EXPECT_LE(tree.profile().skin_drift, 0.02);
  check("moved within the skin");

  // Again: now up to 0.0139 from the search, 2 d beyond the skin.
  const Jitter more{0.004, 2, grove::WrapIntoRootDomain::of(dinfo)};
  grove::gpu::forEach(psys.policy(), psys, more);
  for (auto& p : particles) more(p);
  tree.calcForceAllAndWriteBack(psys, FilteredPairKernel<M>{}, dinfo, grove::REUSE_LIST);
  EXPECT_GT(tree.profile().skin_drift, 0.02);
  EXPECT_EQ(tree.profile().rebuilt_for_skin, 1);
  EXPECT_GE(tree.profile().search_walks, 1);
  check("moved beyond the skin");

  // Lists searched with another skin than the present one are searched again.
  tree.setSkin(0.03);
  tree.calcForceAllAndWriteBack(psys, FilteredPairKernel<M>{}, dinfo, grove::REUSE_LIST);
  EXPECT_EQ(tree.profile().rebuilt_for_skin, 1) << "a new skin";
  check("a new skin");
}

TEST_F(ResidentShortTest, SkinKeepsListsWhileParticlesMoveLittle) {
  checkSkin<SearchMode::GATHER>();
  checkSkin<SearchMode::SCATTER>();
  checkSkin<SearchMode::SYMMETRY>();
}

// A symmetry tree on a gather tree's cells and order (positions unchanged): the symmetric sets
// of brute force; after a new upload the shared tree no longer fits and is refused.
TEST_F(ResidentShortTest, TreeSharedBetweenPassesGivesExactSets) {
  const auto bc = grove::BoundaryCondition::PERIODIC_XZ;
  const auto particles = makeParticles(3000, true, 0.01, 8);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(particles);
  Tree<SearchMode::GATHER> gather(8, psys.policy());
  Tree<SearchMode::SYMMETRY> symmetry(8, psys.policy());
  gather.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo);
  symmetry.calcForceAllAndWriteBackOnTreeOf(gather, psys, PairKernel{}, dinfo);
  EXPECT_EQ(symmetry.profile().sort, 0.0) << "no build of its own";
  expectSetsEqual<SearchMode::SYMMETRY>(symmetry, bruteForce<SearchMode::SYMMETRY>(particles, bc));
  psys.upload(particles);
  EXPECT_THROW(symmetry.calcForceAllAndWriteBackOnTreeOf(gather, psys, PairKernel{}, dinfo), grove::Error);
}

// setSortEvery: builds between sorts keep the last sort's cells, boxes refitted to the present
// positions. The sets stay exact (the boxes hold the present positions) while the particles, some
// wrapped across the periodic faces, drift far from the order of the sort; every third build sorts.
template <SearchMode M>
void checkSortEvery() {
  SCOPED_TRACE(nameOf(M));
  const auto bc = grove::BoundaryCondition::PERIODIC_XYZ;
  auto particles = makeParticles(3000, true, 0.01, 29);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(particles);
  Tree<M> tree(8, psys.policy());
  tree.setSortEvery(3);
  auto ids = [&] {
    std::vector<std::int64_t> v;
    for (const auto& p : psys.download()) v.push_back(p.id);
    return v;
  };
  for (int build = 0; build < 7; ++build) {
    SCOPED_TRACE("build " + std::to_string(build));
    const auto before = ids();
    tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo, build % 2 ? grove::MAKE_LIST : grove::MAKE_LIST_FOR_REUSE);
    const bool sorted = build % 3 == 0;
    EXPECT_EQ(tree.profile().refit, sorted ? 0 : 1);
    if (!sorted) {
      EXPECT_EQ(tree.profile().sort, 0.0) << "no sort between sorts";
      EXPECT_EQ(ids(), before) << "a refit keeps the order";
    }
    const auto expected = bruteForce<M>(particles, bc);
    expectSetsEqual<M>(tree, expected);
    for (const auto& p : psys.download()) {
      const auto id = static_cast<std::size_t>(p.id);
      const NeighbourSums want = hostSums(particles[id], expected[id], particles, bc);
      ASSERT_EQ(p.found.count, want.count) << "particle " << p.id;
      ASSERT_EQ(p.found.id_sum, want.id_sum) << "particle " << p.id;
      ASSERT_NEAR(p.found.weight, want.weight, 1e-12 * std::max(1.0, std::abs(want.weight))) << "particle " << p.id;
    }
    // Far beyond a leaf's size: the kept cells grow loose and overlap.
    const Jitter move{0.03, static_cast<std::uint64_t>(build) + 5, grove::WrapIntoRootDomain::of(dinfo)};
    grove::gpu::forEach(psys.policy(), psys, move);
    for (auto& p : particles) move(p);
  }
  // An upload (a new order) sorts, whatever the count.
  psys.upload(particles);
  tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo);
  EXPECT_EQ(tree.profile().refit, 0);
  expectSetsEqual<M>(tree, bruteForce<M>(particles, bc));
}

TEST_F(ResidentShortTest, SortEveryRefitsTheCellsOfTheLastSort) {
  checkSortEvery<SearchMode::GATHER>();
  checkSortEvery<SearchMode::SCATTER>();
  checkSortEvery<SearchMode::SYMMETRY>();
}

// A second tree's particles: radii `scale` times the particles' (the SPH hydro pass's h beside
// the density pass's search radius).
template <int kPercent>
struct ScaledEP : EP {
  GROVE_HOST_DEVICE void copyFromFP(const Particle& p) { EP::copyFromFP(p), r = p.r * kPercent / 100.0; }
};
template <int kPercent, SearchMode M>
struct FilteredScaledPair {
  __device__ void operator()(const ScaledEP<kPercent>& i, const ScaledEP<kPercent>& j, NeighbourSums& s) const {
    FilteredPairKernel<M>{}(i, j, s);
  }
};
template <int kPercent>
std::vector<Particle> scaledRadii(std::vector<Particle> p) {
  for (auto& q : p) q.r = q.r * kPercent / 100.0;
  return p;
}

// The sums the device wrote (psys) against the host's over brute-force sets of `particles` (the
// radii the borrowing tree reads).
template <SearchMode M>
void expectExactSums(grove::gpu::DeviceParticleSystem<Particle>& psys, const std::vector<Particle>& particles,
                     grove::BoundaryCondition bc) {
  const auto expected = bruteForce<M>(particles, bc);
  for (const auto& p : psys.download()) {
    const auto id = static_cast<std::size_t>(p.id);
    const NeighbourSums want = hostSums(particles[id], expected[id], particles, bc);
    ASSERT_EQ(p.found.count, want.count) << "particle " << p.id;
    ASSERT_EQ(p.found.id_sum, want.id_sum) << "particle " << p.id;
    ASSERT_NEAR(p.found.weight, want.weight, 1e-12 * std::max(1.0, std::abs(want.weight))) << "particle " << p.id;
  }
}

// calcForceAllAndWriteBackOnListsOf: gather and symmetry trees of smaller radii (80 %) evaluate
// a symmetry tree's lists searched with a skin, and get exactly the sums of their own exact sets,
// while the lists hold (2 d + g <= skin, the borrowing tree measures it); when the particles moved
// past the skin since that search, or the borrower's radii (150 %) grew past it, the borrower
// searches itself, exactly. After a REUSE_LIST that rebuilt (here on refitted cells) the lists
// serve again; after an upload they are refused.
TEST_F(ResidentShortTest, ListsOfAnotherTreeServeWhileTheyHoldAndAreSearchedAgainWhenNot) {
  const auto bc = grove::BoundaryCondition::PERIODIC_XYZ;
  auto particles = makeParticles(3000, true, 0.01, 31);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(particles);
  Tree<SearchMode::SYMMETRY> lists(8, psys.policy());
  lists.setSkin(0.02);
  lists.setSortEvery(2);
  grove::gpu::ResidentTreeShort<NeighbourSums, ScaledEP<80>, ScaledEP<80>, SearchMode::GATHER> gather(8, psys.policy());
  grove::gpu::ResidentTreeShort<NeighbourSums, ScaledEP<80>, ScaledEP<80>, SearchMode::SYMMETRY> symmetry(8,
                                                                                                        psys.policy());
  grove::gpu::ResidentTreeShort<NeighbourSums, ScaledEP<150>, ScaledEP<150>, SearchMode::SYMMETRY> larger(
      8, psys.policy());
  auto borrow = [&](bool expect_borrowed, const char* when) {
    SCOPED_TRACE(when);
    gather.calcForceAllAndWriteBackOnListsOf(lists, psys, FilteredScaledPair<80, SearchMode::GATHER>{}, dinfo);
    EXPECT_EQ(gather.profile().lists_borrowed, expect_borrowed ? 1 : 0) << "drift " << gather.profile().skin_drift;
    EXPECT_EQ(gather.profile().search_walks > 0, !expect_borrowed);
    expectExactSums<SearchMode::GATHER>(psys, scaledRadii<80>(particles), bc);
    if (!expect_borrowed) expectSetsEqual<SearchMode::GATHER>(gather, bruteForce<SearchMode::GATHER>(scaledRadii<80>(particles), bc));
    symmetry.calcForceAllAndWriteBackOnListsOf(lists, psys, FilteredScaledPair<80, SearchMode::SYMMETRY>{}, dinfo);
    EXPECT_EQ(symmetry.profile().lists_borrowed, expect_borrowed ? 1 : 0) << "drift " << symmetry.profile().skin_drift;
    expectExactSums<SearchMode::SYMMETRY>(psys, scaledRadii<80>(particles), bc);
  };
  lists.calcForceAllAndWriteBack(psys, FilteredPairKernel<SearchMode::SYMMETRY>{}, dinfo, grove::MAKE_LIST_FOR_REUSE);
  borrow(true, "right after the search");

  // Radii 1.5 times those searched: grown by up to 0.15, past the skin of 0.02.
  larger.calcForceAllAndWriteBackOnListsOf(lists, psys, FilteredScaledPair<150, SearchMode::SYMMETRY>{}, dinfo);
  EXPECT_EQ(larger.profile().lists_borrowed, 0);
  EXPECT_GT(larger.profile().skin_drift, 0.02);
  expectExactSums<SearchMode::SYMMETRY>(psys, scaledRadii<150>(particles), bc);
  expectSetsEqual<SearchMode::SYMMETRY>(larger, bruteForce<SearchMode::SYMMETRY>(scaledRadii<150>(particles), bc));

  // Up to 0.004 per axis: d <= 0.0069, 2 d < 0.02: the kept lists hold.
  const Jitter small{0.004, 11, grove::WrapIntoRootDomain::of(dinfo)};
  grove::gpu::forEach(psys.policy(), psys, small);
  for (auto& p : particles) small(p);
  lists.calcForceAllAndWriteBack(psys, FilteredPairKernel<SearchMode::SYMMETRY>{}, dinfo, grove::REUSE_LIST);
  EXPECT_EQ(lists.profile().rebuilt_for_skin, 0);
  borrow(true, "moved within the skin");

  // Again, and the lists' tree not run since: up to 0.0139 from the search, past the skin.
  const Jitter more{0.004, 12, grove::WrapIntoRootDomain::of(dinfo)};
  grove::gpu::forEach(psys.policy(), psys, more);
  for (auto& p : particles) more(p);
  borrow(false, "moved past the skin");

  // The lists' tree sees it too and searches again, on the refitted cells of its last sort.
  lists.calcForceAllAndWriteBack(psys, FilteredPairKernel<SearchMode::SYMMETRY>{}, dinfo, grove::REUSE_LIST);
  EXPECT_EQ(lists.profile().rebuilt_for_skin, 1);
  EXPECT_EQ(lists.profile().refit, 1);
  expectExactSums<SearchMode::SYMMETRY>(psys, particles, bc);
  borrow(true, "searched again");

  psys.upload(particles);
  EXPECT_THROW(
      gather.calcForceAllAndWriteBackOnListsOf(lists, psys, FilteredScaledPair<80, SearchMode::GATHER>{}, dinfo),
      grove::Error);
}

TEST_F(ResidentShortTest, BadInputIsRefusedClearly) {
  auto particles = makeParticles(500, false, 0.01, 3);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  Tree<SearchMode::GATHER> tree(8, psys.policy());
  const grove::DomainInfo periodic = unitBox(grove::BoundaryCondition::PERIODIC_XYZ);
  auto message_of = [&](auto&& call) {
    try {
      call();
    } catch (const grove::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A radius of half the period.
  particles[17].r = 0.5;
  psys.upload(particles);
  EXPECT_NE(message_of([&] { tree.calcForceAllAndWriteBack(psys, PairKernel{}, periodic); }).find("half the period"),
            std::string::npos);
  // A position outside the periodic box.
  particles[17].r = 0.01;
  particles[3].pos.y = 1.25;
  psys.upload(particles);
  const std::string outside = message_of([&] { tree.calcForceAllAndWriteBack(psys, PairKernel{}, periodic); });
  EXPECT_NE(outside.find("periodic axis 1"), std::string::npos) << outside;
  // Open boundaries take it; REUSE_LIST after a fresh upload does not.
  const grove::DomainInfo open = unitBox(grove::BoundaryCondition::OPEN);
  EXPECT_EQ(message_of([&] { tree.calcForceAllAndWriteBack(psys, PairKernel{}, open, grove::MAKE_LIST_FOR_REUSE); }),
            "no error");
  psys.upload(particles);
  EXPECT_NE(message_of([&] { tree.calcForceAllAndWriteBack(psys, PairKernel{}, open, grove::REUSE_LIST); })
                .find("REUSE_LIST"),
            std::string::npos);
}

}  // namespace
