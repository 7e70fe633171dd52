// Tree stages against brute force: keys, sort, cell linking, moments and groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <utility>

#include "grove/tree/device_form.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/moment_pass.hpp"
#include "grove/tree/radix_sort.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/short_range_search.hpp"
#include "support/gravity.hpp"

using namespace grove;
using grove::testing_support::ChargedEP;

namespace {

std::vector<Vec3d> clusteredPositions(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Vec3d> out(n);
  for (auto& p : out) p = grove::testing_support::plummer(rng);
  // A tight clump of identical positions and a far outlier stress the deepest levels.
  for (std::size_t i = 0; i < std::min<std::size_t>(n / 10, 50); ++i) out[i] = {0.125, 0.25, -0.5};
  if (n > 100) out[100] = {40, -40, 40};
  return out;
}

}  // namespace

TEST(Morton, KeysInterleaveXYZBitsInThatOrder) {
  EXPECT_EQ(mortonKeyFromCell(1, 0, 0), 4u);
  EXPECT_EQ(mortonKeyFromCell(0, 1, 0), 2u);
  EXPECT_EQ(mortonKeyFromCell(0, 0, 1), 1u);
  EXPECT_EQ(mortonKeyFromCell(3, 0, 0), 4u + 32u);
  const std::uint32_t top = kMortonCellsPerAxis - 1;
  EXPECT_EQ(mortonKeyFromCell(top, top, top), (MortonKey{1} << 63) - 1);
}

TEST(Morton, CellBoxesContainTheirPointsAtEveryLevel) {
  const RootCell root = rootCellAround({{-1, -2, -3}, {4, 1, 0}});
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 200; ++i) {
    const Vec3d p{-1 + 5 * u(rng), -2 + 3 * u(rng), -3 + 3 * u(rng)};
    const MortonKey key = root.keyOf(p);
    for (int level : {0, 1, 5, 21}) {
      const Boxd box = root.cellBox(key >> (3 * (kMortonLevels - level)), level);
      ASSERT_TRUE(box.containsClosed(p)) << "level " << level;
      EXPECT_NEAR(box.size().x, root.cellLength(level), 1e-12);
    }
  }
}

// A ring thin in y and z (planetary_ring's: 2 pi long in x, 1e-3 wide in y, flat in z): the root
// cube must hold it and leave it on one side of its mid-planes along the thin axes, so that no
// cell larger than the ring is cut in two there; a thick axis stays centred.
TEST(Morton, PeriodicRootCellSpansWholePeriodsAroundTheDomain) {
  // FDPS's SPH sample: a 1 x 1/8 x 1/8 periodic box, particles widened by a search radius 0.03.
  const Boxd domain{{0, 0, 0}, {1, 0.125, 0.125}};
  const Boxd outer{{-0.03, -0.03, -0.03}, {1.03, 0.155, 0.155}};
  const RootCell all = periodicRootCell(outer, domain, {true, true, true});
  // One period past the domain on each side: 3 periods of the longest axis, centred on the domain.
  EXPECT_NEAR(all.length, 3.0, 1e-5);
  EXPECT_GE(all.length, 3.0);
  EXPECT_NEAR(all.center().x, 0.5, 1e-5);
  EXPECT_NEAR(all.center().y, 0.0625, 1e-5);
  EXPECT_NEAR(all.center().z, 0.0625, 1e-5);
  // Not reaching past the domain: one period. A radius of 1.3 periods: 2 past, 5 periods.
  EXPECT_NEAR(periodicRootCell({{0.1, 0.1, 0.1}, {0.9, 0.9, 0.9}}, {{0, 0, 0}, {1, 1, 1}}, {true, true, true}).length,
              1.0, 1e-5);
  EXPECT_NEAR(periodicRootCell({{-1.3, 0, 0}, {1.4, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}, {true, false, false}).length, 5.0,
              1e-5);
  // An open axis spans `outer`, centred on it; here it is the longest.
  const Boxd tall{{-0.1, -0.1, -4}, {1.1, 1.1, 4}};
  const RootCell mixed = periodicRootCell(tall, {{0, 0, 0}, {1, 1, 1}}, {true, true, false});
  EXPECT_NEAR(mixed.length, 8.0, 1e-4);
  EXPECT_NEAR(mixed.center().z, 0.0, 1e-9);
  EXPECT_NEAR(mixed.center().x, 0.5, 1e-9);
  // The cube holds all of `outer` (no key clamped at its faces).
  for (const auto& [root, box] : {std::pair{all, outer}, std::pair{mixed, tall}})
    for (std::size_t a = 0; a < 3; ++a) {
      EXPECT_LT(root.low[a], box.low[a]) << "axis " << a;
      EXPECT_GT(root.low[a] + root.length, box.high[a]) << "axis " << a;
    }
}

TEST(Morton, ThinAxesLieOffTheRootsMidPlane) {
  const Boxd ring{{-3.14159, 0.9995, -2e-6}, {3.14159, 1.0005, 2e-6}};
  const RootCell root = rootCellAround(ring);
  const Boxd cube = root.box();
  const Vec3d mid = root.center();
  for (std::size_t a = 0; a < 3; ++a) {
    EXPECT_LE(cube.low[a], ring.low[a]) << "axis " << a;
    EXPECT_GE(cube.high[a], ring.high[a]) << "axis " << a;
  }
  EXPECT_NEAR(mid.x, 0.0, 1e-12);  // the long axis: centred
  for (std::size_t a : {1u, 2u}) {
    EXPECT_GT(ring.low[a], mid[a]) << "axis " << a;  // wholly above the mid-plane
    // and cut by no cell boundary until cells are about as small as the ring is wide
    const int level = static_cast<int>(std::floor(std::log2(root.length / (ring.high[a] - ring.low[a])))) - 1;
    const double edge = root.cellLength(level);
    EXPECT_EQ(std::floor((ring.low[a] - root.low[a]) / edge), std::floor((ring.high[a] - root.low[a]) / edge))
        << "axis " << a << " level " << level;
  }
  // Every point of the ring keys into the cube (no clamping at its faces).
  for (double y : {ring.low.y, ring.high.y})
    for (double z : {ring.low.z, ring.high.z})
      for (double x : {ring.low.x, ring.high.x}) EXPECT_TRUE(cube.containsClosed({x, y, z}));
}

// ScatterWalk keeps a j when its search sphere reaches the target's positions, not when only its
// search box does (the box's corners), and keeps one exactly at its radius.
TEST(ShortRangeSearch, ScatterSelectsBySphereNotBox) {
  struct J {
    Vec3d pos;
    double r;
    Vec3d getPos() const { return pos; }
    double getRSearch() const { return r; }
  };
  SearchReach target;
  target.inner = {{0, 0, 0}, {1, 1, 1}};
  // Diagonal from the corner (1,1,1): distance sqrt(3) = 1.73; its box reaches, its sphere does not.
  EXPECT_FALSE(ScatterWalk::particleNeeded(J{{2, 2, 2}, 1.5}, target, Vec3d{}));
  EXPECT_TRUE(overlapsClosed(searchBoxOf(J{{2, 2, 2}, 1.5}), target.inner));
  EXPECT_TRUE(ScatterWalk::particleNeeded(J{{2, 2, 2}, 1.75}, target, Vec3d{}));
  // Facing a side, at exactly its radius; inside the box; and seen through a shift.
  EXPECT_TRUE(ScatterWalk::particleNeeded(J{{2, 0.5, 0.5}, 1.0}, target, Vec3d{}));
  EXPECT_FALSE(ScatterWalk::particleNeeded(J{{2.01, 0.5, 0.5}, 1.0}, target, Vec3d{}));
  EXPECT_TRUE(ScatterWalk::particleNeeded(J{{0.5, 0.5, 0.5}, 0.0}, target, Vec3d{}));
  EXPECT_TRUE(ScatterWalk::particleNeeded(J{{12, 0.5, 0.5}, 1.0}, target, Vec3d{-10, 0, 0}));
  // An empty target needs nothing; a negative radius reaches nothing (its box is empty).
  EXPECT_FALSE(ScatterWalk::particleNeeded(J{{0.5, 0.5, 0.5}, 1e30}, SearchReach{}, Vec3d{}));
  EXPECT_FALSE(ScatterWalk::particleNeeded(J{{1.5, 0.5, 0.5}, -1.0}, target, Vec3d{}));
}

TEST(RadixSort, MatchesStableStdSort) {
  std::mt19937_64 rng(11);
  // 300000 items (4.8 MB) take LargeVector's huge-page path; below 256 items a comparison sort
  // runs instead of the radix passes, so sizes on either side of it.
  for (std::size_t n : {0u, 1u, 7u, 255u, 256u, 257u, 1000u, 100000u, 300000u}) {
    LargeVector<KeyIndex> items(n);
    for (std::size_t i = 0; i < n; ++i) items[i] = {rng() >> (i % 3 == 0 ? 40 : 1), static_cast<std::uint32_t>(i)};
    if (n > 10) items[5].key = items[9].key;  // a tie: stability decides its order
    auto expected = items;
    std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.key < b.key; });
    LargeVector<KeyIndex> scratch;
    radixSortByKey(items, scratch);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(items[i].key, expected[i].key);
      ASSERT_EQ(items[i].index, expected[i].index);
    }
  }
}

TEST(LinkCells, EveryCellHoldsExactlyTheKeysOfItsPrefixAndLeavesRespectTheLimit) {
  const auto positions = clusteredPositions(20000, 5);
  Boxd bounds = Boxd::empty();
  for (const auto& p : positions) bounds.merge(p);
  const RootCell root = rootCellAround(bounds);
  std::vector<MortonKey> keys;
  for (const auto& p : positions) keys.push_back(root.keyOf(p));
  std::sort(keys.begin(), keys.end());
  std::vector<MortonKey> sp_keys(keys.begin(), keys.begin() + 300);  // a second array sharing the tree
  const int leaf_limit = 8;
  const TreeShape shape = linkCells(Cpu{}, keys, sp_keys, leaf_limit);
  std::size_t leaf_particles = 0;
  for (int level = 0; level < shape.levels(); ++level) {
    for (std::uint32_t c = shape.level_begin[static_cast<std::size_t>(level)];
         c < shape.level_begin[static_cast<std::size_t>(level) + 1]; ++c) {
      const TreeCell& cell = shape.cells[c];
      ASSERT_EQ(cell.level, level);
      const MortonKey lo = cellKeyBegin(cell.prefix, level), hi = cellKeyEnd(cell.prefix, level);
      // Brute force: the count of keys in [lo, hi).
      const auto expected = std::count_if(keys.begin(), keys.end(), [&](MortonKey k) { return k >= lo && k < hi; });
      const auto expected_sp =
          std::count_if(sp_keys.begin(), sp_keys.end(), [&](MortonKey k) { return k >= lo && k < hi; });
      ASSERT_EQ(cell.ep_count, static_cast<std::uint32_t>(expected));
      ASSERT_EQ(cell.sp_count, static_cast<std::uint32_t>(expected_sp));
      if (cell.isLeaf()) {
        leaf_particles += cell.ep_count;
        EXPECT_TRUE(cell.count() <= static_cast<std::uint32_t>(leaf_limit) || level == kMortonLevels);
      } else {
        std::uint32_t children = 0;
        for (int k = 0; k < cell.child_count; ++k) children += shape.cells[static_cast<std::size_t>(cell.child_first + k)].count();
        EXPECT_EQ(children, cell.count());
      }
    }
  }
  EXPECT_EQ(leaf_particles, keys.size());
}

TEST(Moments, QuadrupoleOfEveryCellEqualsTheSumOverItsParticles) {
  const auto positions = clusteredPositions(3000, 9);
  Boxd bounds = Boxd::empty();
  for (const auto& p : positions) bounds.merge(p);
  const RootCell root = rootCellAround(bounds);
  std::vector<std::pair<MortonKey, ChargedEP>> keyed;
  std::mt19937_64 rng(2);
  for (const auto& p : positions) keyed.push_back({root.keyOf(p), {p, 0.5 + std::uniform_real_distribution<double>(0, 1)(rng)}});
  std::sort(keyed.begin(), keyed.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<MortonKey> keys;
  std::vector<ChargedEP> epj;
  for (auto& [k, e] : keyed) keys.push_back(k), epj.push_back(e);
  const TreeShape shape = linkCells(Cpu{}, keys, {}, 4);
  std::vector<MomentQuadrupole> quad;
  std::vector<MomentQuadrupoleGeometricCenter> gc;
  computeMoments<MomentQuadrupole, ChargedEP, SPJQuadrupole>(Cpu{}, shape, epj, {}, quad);
  computeMoments<MomentQuadrupoleGeometricCenter, ChargedEP, SPJQuadrupoleGeometricCenter>(Cpu{}, shape, epj, {}, gc);
  auto components = [](const SymMat3d& m) { return std::array{m.xx, m.yy, m.zz, m.xy, m.xz, m.yz}; };
  const char* names[] = {"xx", "yy", "zz", "xy", "xz", "yz"};
  for (std::size_t c = 0; c < shape.cells.size(); ++c) {
    const TreeCell& cell = shape.cells[c];
    double mass = 0;
    Vec3d com, mean;
    for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i)
      mass += epj[i].charge, com += epj[i].charge * epj[i].pos, mean += epj[i].pos;
    com /= mass;
    mean /= static_cast<double>(cell.ep_count);
    SymMat3d q, q_gc;
    Vec3d dipole_gc;
    for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i) {
      q += symmetricOuter(epj[i].pos - com, epj[i].pos - com, epj[i].charge);
      q_gc += symmetricOuter(epj[i].pos - mean, epj[i].pos - mean, epj[i].charge);
      dipole_gc += epj[i].charge * (epj[i].pos - mean);
    }
    // Each cell on its own scale, mass times its side squared, so a small deep cell's moments are
    // checked as closely as the root's: rounding (measured: at most 2e-16 of that scale over the
    // 2025 cells), 1e-12 leaving a wide margin.
    const double side = root.cellLength(cell.level);
    const double scale = mass * side * side;
    ASSERT_NEAR(quad[c].mass, mass, 1e-12 * mass);
    ASSERT_NEAR(norm(quad[c].pos - com), 0.0, 1e-12 * norm(bounds.size()));
    const auto got = components(quad[c].quad), want = components(q);
    const auto got_gc = components(gc[c].quad), want_gc = components(q_gc);
    for (std::size_t k = 0; k < 6; ++k) {
      ASSERT_NEAR(got[k], want[k], 1e-12 * scale) << "cell " << c << " level " << int{cell.level} << " quad." << names[k];
      ASSERT_NEAR(got_gc[k], want_gc[k], 1e-12 * scale)
          << "cell " << c << " level " << int{cell.level} << " geometric-centre quad." << names[k];
    }
    ASSERT_NEAR(norm(gc[c].pos - mean), 0.0, 1e-12 * norm(bounds.size()));
    ASSERT_NEAR(norm(gc[c].dipole - dipole_gc), 0.0, 1e-10 * mass * norm(bounds.size()));
  }
}

TEST(Groups, CoverEveryParticleOnceWithinTheLimit) {
  const auto positions = clusteredPositions(10000, 4);
  Boxd bounds = Boxd::empty();
  for (const auto& p : positions) bounds.merge(p);
  const RootCell root = rootCellAround(bounds);
  std::vector<MortonKey> keys;
  for (const auto& p : positions) keys.push_back(root.keyOf(p));
  std::sort(keys.begin(), keys.end());
  const TreeShape shape = linkCells(Cpu{}, keys, {}, 8);
  const auto groups = makeGroups(Cpu{}, shape, 64);
  std::uint32_t next = 0;
  for (const auto& g : groups) {
    ASSERT_EQ(g.first, next);  // contiguous, in order, no gaps or overlaps
    next += g.count;
  }
  EXPECT_EQ(next, keys.size());
  // Only the identical-position clump may exceed the limit (it is one deepest-level leaf).
  std::size_t oversized = 0;
  for (const auto& g : groups) oversized += g.count > 64;
  EXPECT_LE(oversized, 0u);
}

// The device image of a quadrupole superparticle carries the traceless T = 3 Q - tr(Q) I and
// tr(Q), and its softened expansion -M/R - 0.5 (dTd - eps^2 trQ)/R^5 (R^2 = d^2 + eps^2, as
// user::cuda::addQuadrupole) gives the raw form's potential and acceleration
// (-M/R - 1.5 dQd/R^5 + 0.5 trQ/R^3, as the CPU kernels evaluate it) to float rounding, with
// and without softening.
TEST(DeviceImage, QuadrupoleIsTracelessAndGivesTheRawExpansion) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  SPJQuadrupole s;
  s.mass = 0;
  std::vector<ChargedEP> members;
  for (int k = 0; k < 200; ++k) members.push_back({Vec3d(2 * u(rng), u(rng), 0.3 * u(rng)) + Vec3d(1, -2, 3), 1 + u(rng)});
  for (const auto& m : members) s.mass += m.charge, s.pos += m.charge * m.pos;
  s.pos /= s.mass;
  for (const auto& m : members) s.quad += symmetricOuter(m.pos - s.pos, m.pos - s.pos, m.charge);
  const gpu::DeviceQuadrupole d = gpu::DeviceForm<SPJQuadrupole>::make(s);
  const double tr = s.quad.trace(), scale = std::abs(s.quad.xx) + std::abs(s.quad.yy) + std::abs(s.quad.zz);
  EXPECT_NEAR(double(d.xx) + d.yy + d.zz, 0.0, 1e-6 * scale);
  EXPECT_NEAR(d.xx, 3 * s.quad.xx - tr, 1e-6 * scale);
  EXPECT_NEAR(d.zz, 3 * s.quad.zz - tr, 1e-6 * scale);
  EXPECT_NEAR(d.xy, 3 * s.quad.xy, 1e-6 * scale);
  EXPECT_NEAR(d.yz, 3 * s.quad.yz, 1e-6 * scale);
  EXPECT_FLOAT_EQ(d.trace, static_cast<float>(tr));
  EXPECT_FLOAT_EQ(d.mass, static_cast<float>(s.mass));
  EXPECT_FLOAT_EQ(d.x, static_cast<float>(s.pos.x));
  for (const double eps2 : {0.0, 0.5}) {
    for (const Vec3d target : {Vec3d(8, 1, 2), Vec3d(-3, -6, 4), Vec3d(1, -2, -5)}) {
      const Vec3d r = target - s.pos;
      const double r2 = norm2(r) + eps2, r_inv = 1 / std::sqrt(r2), r5 = r_inv * r_inv * r_inv * r_inv * r_inv;
      // Raw form, double.
      const Vec3d qr(s.quad.xx * r.x + s.quad.xy * r.y + s.quad.xz * r.z,
                     s.quad.xy * r.x + s.quad.yy * r.y + s.quad.yz * r.z,
                     s.quad.xz * r.x + s.quad.yz * r.y + s.quad.zz * r.z);
      const double rqr = dot(r, qr);
      const double pot_raw = -s.mass * r_inv - 1.5 * rqr * r5 + 0.5 * tr * r5 * r2;
      const Vec3d acc_raw = (-s.mass * r5 * r2 - 7.5 * rqr * r5 / r2 + 1.5 * tr * r5) * r + 3.0 * r5 * qr;
      // Traceless form from the float image, in double.
      const Vec3d rd = target - Vec3d(d.x, d.y, d.z);
      const double rd2 = norm2(rd) + eps2, rd_inv = 1 / std::sqrt(rd2);
      const double rd5 = rd_inv * rd_inv * rd_inv * rd_inv * rd_inv;
      const Vec3d t(d.xx * rd.x + d.xy * rd.y + d.xz * rd.z, d.xy * rd.x + d.yy * rd.y + d.yz * rd.z,
                    d.xz * rd.x + d.yz * rd.y + d.zz * rd.z);
      const double q = dot(rd, t) - eps2 * d.trace;
      const double pot = -double(d.mass) * rd_inv - 0.5 * q * rd5;
      const Vec3d acc = -(double(d.mass) * rd5 * rd2 + 2.5 * q * rd5 / rd2) * rd + rd5 * t;
      // The quadrupole terms are a few per cent of the monopole's here: float rounding of the
      // image (about 1e-7 of each component) must leave the sums equal to 1e-6.
      EXPECT_NEAR(pot, pot_raw, 1e-6 * std::abs(pot_raw)) << eps2;
      EXPECT_NEAR(norm(acc - acc_raw), 0.0, 1e-6 * norm(acc_raw)) << eps2;
      // The quadrupole matters at this distance (the check would be empty otherwise), and so
      // does the softening term where eps2 > 0.
      EXPECT_GT(std::abs(pot_raw + s.mass * r_inv), 1e-4 * std::abs(pot_raw));
      if (eps2 > 0) EXPECT_GT(std::abs(0.5 * eps2 * tr * r5), 1e-5 * std::abs(pot_raw));
    }
  }
}
