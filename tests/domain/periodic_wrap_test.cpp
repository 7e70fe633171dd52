// grove::WrapIntoRootDomain (grove/domain/periodic_wrap.hpp): the one periodic wrap of the host
// (DomainInfo::wrapIntoRoot) and the GPU-resident path.
#include <gtest/gtest.h>

#include <cmath>

#include "grove/domain/domain_info.hpp"
#include "grove/domain/periodic_wrap.hpp"

namespace {

using grove::Vec3d;

struct Point {
  Vec3d pos;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
};

TEST(PeriodicWrap, WrapsPeriodicAxesIntoTheRootDomainOnly) {
  const grove::WrapIntoRootDomain wrap{{{-1.0, 0.0, 2.0}, {1.0, 4.0, 3.0}}, grove::BoundaryCondition::PERIODIC_XZ};
  // x: period 2 from -1; y open; z: period 1 from 2.
  const Vec3d w = wrap(Vec3d{1.5, 9.0, 1.25});
  EXPECT_DOUBLE_EQ(w.x, -0.5);
  EXPECT_EQ(w.y, 9.0) << "open axes are left alone";
  EXPECT_DOUBLE_EQ(w.z, 2.25);
  EXPECT_EQ(wrap(Vec3d{-3.0, 0.0, 2.0}).x, -1.0) << "two periods below lands on the lower face";
  EXPECT_EQ(wrap(Vec3d{1.0, 0.0, 2.0}).x, -1.0) << "the upper face belongs to the next period";
  const Vec3d inside{0.3, 1.0, 2.7};
  const Vec3d same = wrap(inside);
  EXPECT_TRUE(same.x == inside.x && same.y == inside.y && same.z == inside.z) << "inside: unchanged, bit for bit";
  // Far outside, on both sides: 1e6 is 500000 periods, so both land on 0.25 (1e6 + 1.25 and
  // -1e6 + 1.25 are exact in double, and so is fmod of them).
  EXPECT_DOUBLE_EQ(wrap(Vec3d{1e6 + 0.25, 0.0, 2.0}).x, 0.25);
  EXPECT_DOUBLE_EQ(wrap(Vec3d{-1e6 + 0.25, 0.0, 2.0}).x, 0.25);
  // A particle's position through getPos / setPos.
  Point p{{2.5, 5.0, -0.5}};
  wrap(p);
  EXPECT_DOUBLE_EQ(p.pos.x, 0.5);
  EXPECT_EQ(p.pos.y, 5.0);
  EXPECT_DOUBLE_EQ(p.pos.z, 2.5);
}

TEST(PeriodicWrap, IsWhatDomainInfoWraps) {
  grove::DomainInfo dinfo;
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0.0, 0.0, 0.0}, {1.0, 0.125, 0.125});
  const auto wrap = grove::WrapIntoRootDomain::of(dinfo);
  for (const Vec3d x : {Vec3d{-0.3, 0.2, -1e-17}, Vec3d{1.0, 0.125, 0.0624}, Vec3d{7.7, -3.3, 0.5}}) {
    const Vec3d a = wrap(x), b = dinfo.wrapIntoRoot(x);
    EXPECT_TRUE(a.x == b.x && a.y == b.y && a.z == b.z);
    EXPECT_TRUE(dinfo.getPosRootDomain().contains(a));
  }
}

}  // namespace
