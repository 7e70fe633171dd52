// The multiwalk memory planner (pure host arithmetic): these tests run without a GPU.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/gpu/multiwalk/multiwalk_plan.hpp"

namespace {

using grove::gpu::WalkBlock;

TEST(MultiwalkPlan, EverythingFitsInOneBlock) {
  const std::vector<std::size_t> bytes{100, 200, 300};
  const auto plan = grove::gpu::planWalkBlocks(bytes.data(), 3, 50, 650);
  ASSERT_EQ(plan.walk_too_large, -1);
  EXPECT_EQ(plan.blocks, (std::vector<WalkBlock>{{0, 3}}));
  EXPECT_EQ(plan.largest_block_bytes, 650u);
}

TEST(MultiwalkPlan, BlocksAreConsecutiveGreedyAndWithinCapacity) {
  const std::vector<std::size_t> bytes{100, 200, 300, 50, 50, 400, 10};
  const std::size_t overhead = 20, capacity = 420;
  const auto plan = grove::gpu::planWalkBlocks(bytes.data(), 7, overhead, capacity);
  ASSERT_EQ(plan.walk_too_large, -1);
  EXPECT_EQ(plan.blocks, (std::vector<WalkBlock>{{0, 2}, {2, 5}, {5, 6}, {6, 7}}));
  int next = 0;
  for (const WalkBlock& b : plan.blocks) {
    EXPECT_EQ(b.begin, next);
    const std::size_t sum = std::accumulate(bytes.begin() + b.begin, bytes.begin() + b.end, overhead);
    EXPECT_LE(sum, capacity);
    if (b.end < 7) {
      EXPECT_GT(sum + bytes[b.end], capacity) << "a block stops only when the next walk does not fit";
    }
    next = b.end;
  }
  EXPECT_EQ(next, 7);
}

TEST(MultiwalkPlan, NamesTheFirstWalkThatCannotFitAlone) {
  const std::vector<std::size_t> bytes{10, 500, 600};
  const auto plan = grove::gpu::planWalkBlocks(bytes.data(), 3, 20, 515);
  EXPECT_EQ(plan.walk_too_large, 1);
  EXPECT_TRUE(plan.blocks.empty());
}

TEST(MultiwalkPlan, NoWalksNoBlocks) {
  EXPECT_TRUE(grove::gpu::planWalkBlocks(nullptr, 0, 20, 100).blocks.empty());
}

TEST(MultiwalkPlan, StreamsShareWhatTheResidentArraysAndKeptListsLeave) {
  EXPECT_EQ(grove::gpu::streamCapacity(1000, 300, 100, 2), 300u);
  EXPECT_EQ(grove::gpu::streamCapacity(1000, 900, 200, 2), 0u);
  EXPECT_TRUE(grove::gpu::residentArraysFit(500, 1000, 0.5));
  EXPECT_FALSE(grove::gpu::residentArraysFit(501, 1000, 0.5));
}

TEST(MultiwalkPlan, SectionsAreAlignedFor16ByteLoads) {
  EXPECT_EQ(grove::gpu::alignSection(0), 0u);
  EXPECT_EQ(grove::gpu::alignSection(1), 256u);
  EXPECT_EQ(grove::gpu::alignSection(256), 256u);
  EXPECT_EQ(grove::gpu::alignSection(257), 512u);
}

TEST(MultiwalkPlan, TheErrorNamesTheSizes) {
  const std::string m = grove::gpu::describeWalkDoesNotFit({7, 1, 500, 4000, 900, 123456, 65536, 1 << 20, 4096, 2});
  for (const char* part : {"walk 7", "tag 1", "500 i-particles", "4000 EPJ", "900 SPJ", "123456 bytes", "65536 bytes",
                           "budget 1048576", "4096 bytes", "2 streams"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
  EXPECT_THROW(grove::gpu::throwGpuError("gpu", m), grove::Error);
}

}  // namespace
