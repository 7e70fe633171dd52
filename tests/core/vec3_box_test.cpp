#include <gtest/gtest.h>

#include <limits>

#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/vec3.hpp"

using grove::Boxd;
using grove::Vec3d;
using grove::Vec3f;

TEST(Vec3, ArithmeticAndDotProductMatchHandComputation) {
  const Vec3d a{1, 2, 3}, b{-4, 5, 0.5};
  EXPECT_EQ(a + b, Vec3d(-3, 7, 3.5));
  EXPECT_EQ(a - b, Vec3d(5, -3, 2.5));
  EXPECT_EQ(2.0 * a, Vec3d(2, 4, 6));
  EXPECT_EQ(a / 2.0, Vec3d(0.5, 1, 1.5));
  EXPECT_EQ(-a, Vec3d(-1, -2, -3));
  EXPECT_DOUBLE_EQ(dot(a, b), -4 + 10 + 1.5);
  EXPECT_EQ(cross(Vec3d(1, 0, 0), Vec3d(0, 1, 0)), Vec3d(0, 0, 1));
  EXPECT_DOUBLE_EQ(norm(Vec3d(3, 4, 12)), 13.0);
  EXPECT_EQ(a[0], 1.0);
  EXPECT_EQ(a[2], 3.0);
}

TEST(Vec3, FloatWidensToDoubleImplicitly) {
  const Vec3f f{1.5f, -2.f, 0.25f};
  const Vec3d d = f;
  EXPECT_EQ(d, Vec3d(1.5, -2, 0.25));
  const Vec3f back = static_cast<Vec3f>(Vec3d(0.1, 0.2, 0.3));
  EXPECT_FLOAT_EQ(back.x, 0.1f);
}

TEST(Vec3, IsFiniteRejectsNanAndInfinity) {
  EXPECT_TRUE(isFinite(Vec3d(1, 2, 3)));
  EXPECT_FALSE(isFinite(Vec3d(std::numeric_limits<double>::quiet_NaN(), 0, 0)));
  EXPECT_FALSE(isFinite(Vec3d(0, 0, std::numeric_limits<double>::infinity())));
}

TEST(Box, IsHalfOpenSoNeighboursDoNotOverlap) {
  const Boxd left{{0, 0, 0}, {1, 1, 1}}, right{{1, 0, 0}, {2, 1, 1}};
  const Vec3d on_face{1, 0.5, 0.5};
  EXPECT_FALSE(left.contains(on_face));
  EXPECT_TRUE(right.contains(on_face));
  EXPECT_TRUE(left.contains({0, 0, 0}));
  EXPECT_TRUE(left.containsClosed({1, 1, 1}));
}

TEST(Box, MergeOfEmptyGivesTheBoundingBox) {
  Boxd b = Boxd::empty();
  EXPECT_TRUE(b.isEmpty());
  b.merge(Vec3d(1, -2, 3));
  b.merge(Vec3d(-1, 5, 3));
  EXPECT_EQ(b.low, Vec3d(-1, -2, 3));
  EXPECT_EQ(b.high, Vec3d(1, 5, 3));
  EXPECT_EQ(b.center(), Vec3d(0, 1.5, 3));
  EXPECT_TRUE(Boxd::everything().contains({1e300, -1e300, 0}));
}

// grove's message formatter parses the specification with fmt's own parser and writes the digits
// in the compiled library (grove/core/finite.hpp: keeps fmt's float writer out of user files);
// what a message says must be what fmt itself writes, and non-finite values come by name.
TEST(Messages, FloatsVectorsAndBoxesAreWrittenAsFmtWritesThem) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(grove::formatMessage("x {:.3e} y {} z {:>8.2f}|", 1234.5678, 0.1f, 2.5), "x 1.235e+03 y 0.1 z     2.50|");
  EXPECT_EQ(grove::formatMessage("{} {:.2e} {}", nan, -inf, -nan), "nan -inf -nan");
  EXPECT_EQ(grove::formatMessage("{:g} {:+.1f}", 1e-7f, 0.25), "1e-07 +0.2");
  EXPECT_EQ(fmt::format("{:.1f}", Vec3d(1, 2.25, -3)), "(1.0, 2.2, -3.0)");
  EXPECT_EQ(fmt::format("{}", Vec3d(0.1, nan, 3)), "(0.1, nan, 3)");
  EXPECT_EQ(fmt::format("{}", Boxd{Vec3d(0, 0, 0), Vec3d(1, 2, 3)}), "[(0, 0, 0), (1, 2, 3))");
  try {
    grove::require(false, "stage", "theta {} is bad", 0.5);
    ADD_FAILURE() << "require(false, ...) did not throw";
  } catch (const grove::Error& e) {
    EXPECT_EQ(e.message(), "theta 0.5 is bad");
    EXPECT_EQ(e.stage(), "stage");
  }
}
