// The GPU-resident short-range tree on several ranks sharing one GPU (1-4 under mpirun): the
// device LET (let/short_range_let_gpu.cuh) and the global j-tree. Every rank's neighbour sets
// equal the brute-force search over all ranks' particles exactly, in the three modes, with open and
// periodic boundaries, for particles interleaved across ranks (every rank needs nearly all
// others') and in slabs (the LET selects), and with ranks that hold nothing; the kernels' sums
// equal the host's over those sets; REUSE_LIST resends fresh payloads along the kept selections.
// Skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/force/resident_tree_short.cuh"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/for_each.cuh"
#include "resident_short_setup.cuh"

namespace {

using namespace resident_short_test;

class ResidentShortExchange : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

enum class Layout { kInterleaved, kSlabs, kAllOnRankZero };

// This rank's particles of `all`: every ranks-th by id, a slab of x, or all on rank 0.
std::vector<Particle> shareOf(const std::vector<Particle>& all, Layout layout, const grove::Comm& comm) {
  std::vector<Particle> mine;
  for (const auto& p : all) {
    const int owner = layout == Layout::kInterleaved ? static_cast<int>(p.id % comm.size())
                      : layout == Layout::kSlabs     ? std::min(comm.size() - 1, static_cast<int>(p.pos.x * comm.size()))
                                                     : 0;
    if (owner == comm.rank()) mine.push_back(p);
  }
  return mine;
}

struct DoubleWeight {
  GROVE_HOST_DEVICE void operator()(Particle& p) const { p.w *= 2.0; }
};

// This rank's sets and the kernels' sums against brute force over all particles.
template <SearchMode M>
void checkAcrossRanks(Layout layout, grove::BoundaryCondition bc, const std::string& what) {
  SCOPED_TRACE(what);
  const grove::Comm comm = grove::Comm::world();
  const auto all = makeParticles(3000, true, 0.01, 31);
  const auto mine = shareOf(all, layout, comm);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(mine);
  Tree<M> tree(8, psys.policy());
  tree.calcForceAllAndWriteBack(psys, PairKernel{}, dinfo, grove::MAKE_LIST_FOR_REUSE);
  EXPECT_EQ(tree.globalTreeBuilt(), comm.size() > 1);

  const auto expected = bruteForce<M>(all, bc);
  auto found = deviceSets(tree, all.size());
  std::int64_t pairs = 0;
  for (const auto& p : mine) {
    const auto id = static_cast<std::size_t>(p.id);
    auto want = expected[id];
    std::sort(want.begin(), want.end());
    std::sort(found[id].begin(), found[id].end());
    ASSERT_EQ(found[id], want) << "rank " << comm.rank() << ", particle " << p.id;
    pairs += static_cast<std::int64_t>(want.size());
  }
  EXPECT_EQ(tree.profile().neighbours, pairs);
  // What was sent arrived (summed over the ranks).
  EXPECT_EQ(comm.allreduceSum(tree.profile().let_sent), comm.allreduceSum(tree.profile().let_received));
  if (comm.rank() == 0)
    std::printf("  [%s] %d ranks: rank 0 holds %zu, LET sent %lld, received %lld, own images %lld, %lld pairs\n",
                what.c_str(), comm.size(), mine.size(), static_cast<long long>(tree.profile().let_sent),
                static_cast<long long>(tree.profile().let_received),
                static_cast<long long>(tree.profile().let_own_images), static_cast<long long>(pairs));

  auto check_sums = [&](const std::vector<Particle>& after, double weight_factor, const char* form) {
    SCOPED_TRACE(form);
    ASSERT_EQ(after.size(), mine.size());
    for (const auto& p : after) {
      const auto id = static_cast<std::size_t>(p.id);
      NeighbourSums want = hostSums(all[id], expected[id], all, bc);
      want.weight *= weight_factor;
      ASSERT_EQ(p.found.count, want.count) << "particle " << p.id;
      ASSERT_EQ(p.found.id_sum, want.id_sum) << "particle " << p.id;
      ASSERT_NEAR(p.found.weight, want.weight, 1e-12 * std::max(1.0, std::abs(want.weight))) << "particle " << p.id;
      for (double c : {p.found.offset.x - want.offset.x, p.found.offset.y - want.offset.y,
                       p.found.offset.z - want.offset.z})
        ASSERT_LT(std::abs(c), 1e-12 * std::max<double>(1.0, want.count)) << "particle " << p.id;
    }
  };
  check_sums(psys.download(), 1.0, "make list");

  // Every rank's weights double; the kept lists see the received copies' new weights too.
  grove::gpu::forEach(psys.policy(), psys, DoubleWeight{});
  tree.calcForceAllAndWriteBack(psys, grove::gpu::withNeighbourSets(SetKernel{}), dinfo, grove::REUSE_LIST);
  EXPECT_EQ(tree.profile().search_walks, 0);
  check_sums(psys.download(), 2.0, "reuse list");
}

template <SearchMode M>
void checkLayouts(const char* mode) {
  for (auto layout : {Layout::kInterleaved, Layout::kSlabs, Layout::kAllOnRankZero})
    for (auto bc : {grove::BoundaryCondition::OPEN, grove::BoundaryCondition::PERIODIC_Y,
                    grove::BoundaryCondition::PERIODIC_XYZ}) {
      const char* layout_name = layout == Layout::kInterleaved ? "interleaved"
                                : layout == Layout::kSlabs     ? "slabs"
                                                               : "all on rank 0";
      checkAcrossRanks<M>(layout, bc,
                          std::string(mode) + ", " + layout_name + ", boundary " + std::to_string(static_cast<int>(bc)));
    }
}

// With a skin across ranks: the LET and the kept lists hold every neighbour while the particles
// move little (no new search), and after they moved more the tree searches again.
TEST_F(ResidentShortExchange, SkinKeepsListsAcrossRanks) {
  const grove::Comm comm = grove::Comm::world();
  const auto bc = grove::BoundaryCondition::PERIODIC_XYZ;
  auto all = makeParticles(3000, true, 0.01, 41);
  auto mine = shareOf(all, Layout::kSlabs, comm);
  const grove::DomainInfo dinfo = unitBox(bc);
  grove::gpu::DeviceParticleSystem<Particle> psys;
  psys.upload(mine);
  Tree<SearchMode::SYMMETRY> tree(8, psys.policy());
  tree.setSkin(0.02);
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    const auto expected = bruteForce<SearchMode::SYMMETRY>(all, bc);
    auto found = deviceSets(tree, all.size());
    for (const auto& p : psys.download()) {
      const auto id = static_cast<std::size_t>(p.id);
      std::sort(found[id].begin(), found[id].end());
      for (std::int64_t j : expected[id])
        ASSERT_TRUE(std::binary_search(found[id].begin(), found[id].end(), j)) << "particle " << id << " misses " << j;
      const NeighbourSums want = hostSums(all[id], expected[id], all, bc);
      ASSERT_EQ(p.found.count, want.count) << "particle " << p.id;
      ASSERT_EQ(p.found.id_sum, want.id_sum) << "particle " << p.id;
    }
  };
  tree.calcForceAllAndWriteBack(psys, FilteredPairKernel<SearchMode::SYMMETRY>{}, dinfo, grove::MAKE_LIST_FOR_REUSE);
  check("searched");
  for (const std::uint64_t salt : {1u, 2u}) {
    const Jitter jitter{0.004, salt, grove::WrapIntoRootDomain::of(dinfo)};
    grove::gpu::forEach(psys.policy(), psys, jitter);
    for (auto& p : all) jitter(p);
    tree.calcForceAllAndWriteBack(psys, FilteredPairKernel<SearchMode::SYMMETRY>{}, dinfo, grove::REUSE_LIST);
    EXPECT_EQ(tree.profile().rebuilt_for_skin, salt == 1 ? 0 : 1) << "drift " << tree.profile().skin_drift;
    check(salt == 1 ? "moved within the skin" : "moved beyond the skin");
  }
}

TEST_F(ResidentShortExchange, GatherSetsEqualBruteForceOverAllRanks) { checkLayouts<SearchMode::GATHER>("gather"); }
TEST_F(ResidentShortExchange, ScatterSetsEqualBruteForceOverAllRanks) { checkLayouts<SearchMode::SCATTER>("scatter"); }
TEST_F(ResidentShortExchange, SymmetrySetsEqualBruteForceOverAllRanks) {
  checkLayouts<SearchMode::SYMMETRY>("symmetry");
}

}  // namespace
