#include <gtest/gtest.h>

#include <random>

#include "grove/domain/cut_tree.hpp"
#include "grove/domain/decomposition.hpp"

using namespace grove;

namespace {

// Two slabs along x at 0.5; the upper slab cut along y at 0.25 into ranks 1 and 2.
CutTree threeRankTree() {
  CutTree t;
  t.nodes = {{0, 1, 2, 0, -1}, {-1, -1, 0, -1, 0}, {1, 3, 2, 1, -1}, {-1, -1, 0, -1, 1}, {-1, -1, 0, -1, 2}};
  t.cuts = {0.5, 0.25};
  return t;
}

}  // namespace

TEST(CutTree, OwnerLookupPutsPointsOnCutsIntoTheUpperSide) {
  const CutTree t = threeRankTree();
  EXPECT_EQ(t.ownerOf({0.1, 0.9, 0}), 0);
  EXPECT_EQ(t.ownerOf({0.5, 0.0, 0}), 1);
  EXPECT_EQ(t.ownerOf({0.5, 0.25, 0}), 2);
  EXPECT_EQ(t.ownerOf({0.7, 0.2, 0}), 1);
}

TEST(CutTree, BoxesTileTheRootAndAgreeWithOwnerLookup) {
  const CutTree t = threeRankTree();
  const Boxd root{{0, 0, 0}, {1, 1, 1}};
  const auto boxes = t.boxes(root, 3);
  EXPECT_EQ(boxes[0], (Boxd{{0, 0, 0}, {0.5, 1, 1}}));
  EXPECT_EQ(boxes[1], (Boxd{{0.5, 0, 0}, {1, 0.25, 1}}));
  EXPECT_EQ(boxes[2], (Boxd{{0.5, 0.25, 0}, {1, 1, 1}}));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 1000; ++i) {
    const Vec3d p{u(rng), u(rng), u(rng)};
    int holders = 0;
    for (int r = 0; r < 3; ++r) holders += boxes[static_cast<std::size_t>(r)].contains(p);
    ASSERT_EQ(holders, 1);
    ASSERT_TRUE(boxes[static_cast<std::size_t>(t.ownerOf(p))].contains(p));
  }
}

TEST(CutTree, BlendingIsAnExponentialMovingAverageOfCuts) {
  CutTree previous = threeRankTree(), next = threeRankTree();
  next.cuts = {0.7, 0.45};
  ASSERT_TRUE(next.sameShapeAs(previous));
  next.blendWith(previous, 0.25);
  EXPECT_DOUBLE_EQ(next.cuts[0], 0.25 * 0.7 + 0.75 * 0.5);
  EXPECT_DOUBLE_EQ(next.cuts[1], 0.25 * 0.45 + 0.75 * 0.25);
  CutTree other_shape = threeRankTree();
  other_shape.nodes[0].axis = 2;
  EXPECT_FALSE(other_shape.sameShapeAs(previous));
}
