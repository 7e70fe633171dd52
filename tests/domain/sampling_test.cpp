#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "grove/domain/domain_info.hpp"

TEST(StratifiedSampling, PicksDistinctIndicesOnePerStratum) {
  const auto picks = grove::detail::stratifiedSampleIndices(1000, 100, 42);
  ASSERT_EQ(picks.size(), 100u);
  for (std::size_t k = 0; k < picks.size(); ++k) {
    EXPECT_GE(picks[k], k * 10);
    EXPECT_LT(picks[k], (k + 1) * 10);
  }
  EXPECT_EQ(std::set<std::size_t>(picks.begin(), picks.end()).size(), 100u);
}

TEST(StratifiedSampling, NeverAsksForMoreThanThereAre) {
  const auto picks = grove::detail::stratifiedSampleIndices(5, 50, 1);
  ASSERT_EQ(picks.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(picks[k], k);
  EXPECT_TRUE(grove::detail::stratifiedSampleIndices(0, 10, 1).empty());
}

TEST(StratifiedSampling, IsReproducibleFromTheSeed) {
  EXPECT_EQ(grove::detail::stratifiedSampleIndices(10000, 300, 9), grove::detail::stratifiedSampleIndices(10000, 300, 9));
  EXPECT_NE(grove::detail::stratifiedSampleIndices(10000, 300, 9), grove::detail::stratifiedSampleIndices(10000, 300, 10));
}
