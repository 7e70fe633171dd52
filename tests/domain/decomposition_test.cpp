// The decomposition algorithms on their own, without messages: balance, tiling and
// ownership against a brute-force search over the boxes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "grove/domain/decomposition.hpp"
#include "support/particles.hpp"

using namespace grove;
using grove::testing_support::plummer;
using grove::testing_support::uniformInCube;

namespace {

std::vector<WeightedSample> samplesOf(const std::vector<Vec3d>& positions) {
  std::vector<WeightedSample> s;
  for (const auto& p : positions) s.push_back({p, 1.0});
  return s;
}

// Brute-force owner: the unique box that contains p. Fails the test if not unique.
int bruteForceOwner(const std::vector<Boxd>& boxes, const Vec3d& p) {
  int owner = -1, holders = 0;
  for (std::size_t r = 0; r < boxes.size(); ++r)
    if (boxes[r].contains(p)) owner = static_cast<int>(r), ++holders;
  EXPECT_EQ(holders, 1) << "point " << p.x << "," << p.y << "," << p.z;
  return owner;
}

std::vector<int> countsPerRank(const CutTree& tree, const std::vector<Vec3d>& positions, int ranks) {
  std::vector<int> counts(static_cast<std::size_t>(ranks), 0);
  for (const auto& p : positions) ++counts[static_cast<std::size_t>(tree.ownerOf(p))];
  return counts;
}

double maxOverMean(const std::vector<int>& counts) {
  double total = 0;
  for (int c : counts) total += c;
  return *std::max_element(counts.begin(), counts.end()) / (total / static_cast<double>(counts.size()));
}

}  // namespace

TEST(WeightedCuts, SplitEqualWeightsAtTheMedianBetweenSamples) {
  std::vector<WeightedSample> s = samplesOf({{3, 0, 0}, {1, 0, 0}, {4, 0, 0}, {2, 0, 0}});
  const double half[] = {0.5};
  const auto cuts = detail::weightedCuts(s, 0, half, -1e9, 1e9);
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_DOUBLE_EQ(cuts[0], 2.5);
}

TEST(WeightedCuts, FollowWeightsNotCounts) {
  // One heavy sample at x=1 outweighs three light ones to its right.
  std::vector<WeightedSample> s = {{{1, 0, 0}, 3.0}, {{2, 0, 0}, 1.0}, {{3, 0, 0}, 1.0}, {{4, 0, 0}, 1.0}};
  const double half[] = {0.5};
  EXPECT_DOUBLE_EQ(detail::weightedCuts(s, 0, half, -1e9, 1e9)[0], 1.5);
}

TEST(WeightedCuts, IdenticalPositionsAllFallOnOneSide) {
  std::vector<WeightedSample> s = samplesOf(std::vector<Vec3d>(100, Vec3d{0.3, 0.3, 0.3}));
  const double quarters[] = {0.25, 0.5, 0.75};
  for (double c : detail::weightedCuts(s, 1, quarters, 0, 1)) EXPECT_DOUBLE_EQ(c, 0.3);
}

TEST(WeightedCuts, EmptyCellIsCutGeometrically) {
  std::vector<WeightedSample> none;
  const double half[] = {0.5};
  EXPECT_DOUBLE_EQ(detail::weightedCuts(none, 0, half, 2, 4)[0], 3.0);
}

TEST(MultisectionGrid, PrefersCubicCellsAndFollowsTheBoxShape) {
  EXPECT_EQ(chooseMultisectionGrid(8, {1, 1, 1}), (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(chooseMultisectionGrid(8, {8, 1, 1}), (std::array<int, 3>{8, 1, 1}));
  EXPECT_EQ(chooseMultisectionGrid(4, {1, 0.125, 0.125}), (std::array<int, 3>{4, 1, 1}));
  EXPECT_EQ(chooseMultisectionGrid(7, {1, 1, 1})[0] * chooseMultisectionGrid(7, {1, 1, 1})[1] *
                chooseMultisectionGrid(7, {1, 1, 1})[2],
            7);
  EXPECT_EQ(chooseMultisectionGrid(1, {1, 1, 1}), (std::array<int, 3>{1, 1, 1}));
}

class DecompositionBalance : public ::testing::TestWithParam<std::tuple<bool, bool, int>> {};

// Equal weights, many samples: every rank gets close to N / ranks particles, and every position
// has exactly one owner, the one the lookup names.
TEST_P(DecompositionBalance, EqualWeightsGiveEqualCountsAndUniqueOwners) {
  const auto [use_orb, use_plummer, ranks] = GetParam();
  std::mt19937_64 rng(1234 + static_cast<unsigned>(ranks));
  std::vector<Vec3d> positions(100000);
  for (auto& p : positions) p = use_plummer ? plummer(rng) : uniformInCube(rng);
  std::vector<Vec3d> sample_positions(positions.begin(), positions.begin() + 1000 * ranks);
  auto samples = samplesOf(sample_positions);
  const Boxd root = Boxd::everything();
  const CutTree tree = use_orb ? decomposeOrb(samples, ranks, root)
                               : decomposeMultisection(samples, chooseMultisectionGrid(ranks, {1, 1, 1}), root);
  const auto boxes = tree.boxes(root, ranks);
  for (std::size_t i = 0; i < 2000; ++i) ASSERT_EQ(bruteForceOwner(boxes, positions[i]), tree.ownerOf(positions[i]));
  const auto counts = countsPerRank(tree, positions, ranks);
  EXPECT_LE(maxOverMean(counts), 1.10) << "ranks " << ranks;
}

INSTANTIATE_TEST_SUITE_P(MethodsShapesRanks, DecompositionBalance,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Values(2, 3, 4, 5, 7, 8)));

TEST(Orb, CutsTheLongestSide) {
  std::mt19937_64 rng(5);
  std::vector<WeightedSample> samples;
  for (int i = 0; i < 4000; ++i) samples.push_back({{10.0 * uniformInCube(rng).x, uniformInCube(rng).y, 0.5}, 1.0});
  const CutTree tree = decomposeOrb(samples, 2, Boxd::everything());
  EXPECT_EQ(tree.nodes[0].axis, 0);
  EXPECT_NEAR(tree.cuts[0], 5.0, 0.5);
}

TEST(Orb, HandlesRankCountsThatAreNotPowersOfTwo) {
  std::mt19937_64 rng(9);
  std::vector<Vec3d> positions(30000);
  for (auto& p : positions) p = uniformInCube(rng);
  auto samples = samplesOf(positions);
  const CutTree tree = decomposeOrb(samples, 6, Boxd{{0, 0, 0}, {1, 1, 1}});
  const auto counts = countsPerRank(tree, positions, 6);
  for (int c : counts) EXPECT_NEAR(c, 5000, 250);
}

TEST(Decomposition, FewerSamplesThanRanksStillGivesEveryPointOneOwner) {
  auto samples = samplesOf({{0.2, 0.2, 0.2}, {0.8, 0.8, 0.8}});
  const Boxd root{{0, 0, 0}, {1, 1, 1}};
  for (bool orb : {false, true}) {
    const CutTree tree = orb ? decomposeOrb(samples, 4, root) : decomposeMultisection(samples, {2, 2, 1}, root);
    const auto boxes = tree.boxes(root, 4);
    std::mt19937_64 rng(3);
    for (int i = 0; i < 500; ++i) {
      const Vec3d p = uniformInCube(rng);
      ASSERT_EQ(bruteForceOwner(boxes, p), tree.ownerOf(p));
    }
  }
}
