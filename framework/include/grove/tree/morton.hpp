#pragma once
/// @file
/// Morton (Z-order) keys: 21 bits per axis interleaved into 63 bits of a uint64.
///
/// Why 64-bit keys: 21 levels resolve 2^-21 ~ 4.8e-7 of the root cube, finer than float
/// positions inside it and enough for the clustering of N-body runs (a leaf only overflows its
/// n_leaf_limit if more than n_leaf_limit particles share a cell 4.8e-7 root lengths wide; such a
/// leaf is kept, larger, and stays correct). 128-bit keys would double the sort traffic, which is
/// a leading cost of every step, for a depth no test case needs.
#include <array>
#include <cmath>
#include <cstdint>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"

namespace grove {

/// A Morton key: x, y, z cell bits interleaved (x highest), 63 bits used.
using MortonKey = std::uint64_t;

/// Levels below the root that a key resolves (bits per axis).
inline constexpr int kMortonLevels = 21;
/// Cells per axis at the deepest level (2^21).
inline constexpr std::uint32_t kMortonCellsPerAxis = 1u << kMortonLevels;

namespace detail {
// Spreads the low 21 bits of v so that bit i lands on bit 3i.
constexpr std::uint64_t spreadBits3(std::uint64_t v) {
  v &= 0x1fffffull;
  v = (v | (v << 32)) & 0x1f00000000ffffull;
  v = (v | (v << 16)) & 0x1f0000ff0000ffull;
  v = (v | (v << 8)) & 0x100f00f00f00f00full;
  v = (v | (v << 4)) & 0x10c30c30c30c30c3ull;
  v = (v | (v << 2)) & 0x1249249249249249ull;
  return v;
}
}  // namespace detail

/// The key of the deepest-level cell (ix, iy, iz); each coordinate's low 21 bits are used.
constexpr MortonKey mortonKeyFromCell(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz) {
  return (detail::spreadBits3(ix) << 2) | (detail::spreadBits3(iy) << 1) | detail::spreadBits3(iz);
}

/// The cube the keys are relative to: a corner and an edge length.
struct RootCell {
  Vec3d low;            ///< the lowest corner
  double length = 1.0;  ///< the edge length (> 0)

  /// The cube as a box.
  Boxd box() const { return {low, low + Vec3d(length)}; }
  /// The cube's centre.
  Vec3d center() const { return low + Vec3d(0.5 * length); }
  /// Edge length of a cell at `level` (length / 2^level).
  double cellLength(int level) const { return std::ldexp(length, -level); }

  /// The key of the deepest cell holding pos; positions outside the cube are clamped to its
  /// boundary cells. Host and device give the same key (the GPU tree build calls this too).
  GROVE_HOST_DEVICE MortonKey keyOf(const Vec3d& pos) const {
    const double scale = static_cast<double>(kMortonCellsPerAxis) / length;
    auto cell = [&](double x, double lo) {
      const double c = ::floor((x - lo) * scale);
      return static_cast<std::uint32_t>(c < 0.0 ? 0.0 : (c >= kMortonCellsPerAxis ? kMortonCellsPerAxis - 1 : c));
    };
    return mortonKeyFromCell(cell(pos.x, low.x), cell(pos.y, low.y), cell(pos.z, low.z));
  }
  /// Geometric box of the cell at `level` whose keys start with `prefix` (key >> 3 (21 - level)).
  Boxd cellBox(MortonKey prefix, int level) const;
};

/// The integer coordinates (in cells of that level) of the cell at `level` whose keys start with
/// `prefix`: the inverse of mortonKeyFromCell for a prefix. Host and device.
GROVE_HOST_DEVICE inline void cellCoordinates(MortonKey prefix, int level, std::uint32_t (&c)[3]) {
  c[0] = c[1] = c[2] = 0;
  for (int l = 0; l < level; ++l) {
    const auto octant = static_cast<std::uint32_t>((prefix >> (3 * (level - 1 - l))) & 7u);
    c[0] = (c[0] << 1) | ((octant >> 2) & 1u);
    c[1] = (c[1] << 1) | ((octant >> 1) & 1u);
    c[2] = (c[2] << 1) | (octant & 1u);
  }
}

/// The smallest cube around a bounding box, widened a little so that the maximum falls inside
/// the last cell rather than on the upper face. An empty box gives the unit cube centred on the
/// origin.
RootCell rootCellAround(const Boxd& bounds);

/// The root cell of a short-range tree with periodic axes, placed as FDPS 7.1 places it. Along a
/// periodic axis (periodic[a]) the cube is centred on `domain` (the period) and spans 2n + 1
/// periods, n the number of whole periods by which `outer` (the particles' positions widened by
/// the search radius) reaches past the domain on the farther side; along an open axis it spans
/// `outer`, centred on it. The edge is the largest of these spans; the thin-axis rule and the
/// widening are rootCellAround's.
///
/// Why not rootCellAround(outer): the cube's edge sets every cell's size, so the groups and each
/// group's list. On FDPS's SPH sample (a 1 x 1/8 x 1/8 periodic box on a lattice of 1/128) the
/// cube around `outer` (edge ~1.06, against FDPS's 3 periods) cut the lattice into other groups,
/// and the kernels were given 12% more pairs than FDPS's.
RootCell periodicRootCell(const Boxd& outer, const Boxd& domain, const std::array<bool, 3>& periodic);

/// First key of the cell (prefix, level).
constexpr MortonKey cellKeyBegin(MortonKey prefix, int level) { return prefix << (3 * (kMortonLevels - level)); }
/// One past the last key of the cell (prefix, level).
constexpr MortonKey cellKeyEnd(MortonKey prefix, int level) {
  return (prefix + 1) << (3 * (kMortonLevels - level));
}

}  // namespace grove
