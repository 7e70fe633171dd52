#include "grove/tree/morton.hpp"

#include <algorithm>
#include <cmath>

namespace grove {

Boxd RootCell::cellBox(MortonKey prefix, int level) const {
  std::uint32_t c[3];
  cellCoordinates(prefix, level, c);
  const double edge = cellLength(level);
  const Vec3d lo = low + Vec3d(c[0] * edge, c[1] * edge, c[2] * edge);
  return {lo, lo + Vec3d(edge)};
}

namespace {

// The cube of edge max(span) about `center`, over particles within `bounds`: widened by a relative
// 1e-6 (and never to zero), so the upper face is strictly outside. A thin axis (the particles span
// less than a tenth of the cube there: a disc, a ring, a sheet): centred, the particles would
// straddle the cube's mid-plane, a cell boundary at every level, so every cell down to the
// sheet's thickness would be cut in two along that axis, each half a cell of its own (up to 4x
// the cells, superparticles and interactions for a ring thin in two axes). Moved down by 0.51 of
// their extent, they lie in the upper half, from just above the mid-plane, and are cut only by
// cells smaller than their extent, as in FDPS 7.1.
RootCell cubeOver(Vec3d center, const Vec3d& span, const Boxd& bounds) {
  const double magnitude = std::max({std::abs(bounds.low.x), std::abs(bounds.low.y), std::abs(bounds.low.z),
                                     std::abs(bounds.high.x), std::abs(bounds.high.y), std::abs(bounds.high.z)});
  const double length = std::max({span.x, span.y, span.z}) * (1.0 + 1e-6) + std::max(magnitude, 1.0) * 1e-12;
  for (std::size_t a = 0; a < 3; ++a)
    if (span[a] < 0.1 * length) center[a] -= 0.51 * span[a];
  return {center - Vec3d(0.5 * length), length};
}

}  // namespace

RootCell rootCellAround(const Boxd& bounds) {
  if (bounds.isEmpty()) return {Vec3d(-0.5), 1.0};
  return cubeOver(bounds.center(), bounds.size(), bounds);
}

RootCell periodicRootCell(const Boxd& outer, const Boxd& domain, const std::array<bool, 3>& periodic) {
  if (outer.isEmpty()) return rootCellAround(outer);
  Vec3d span, center;
  for (std::size_t a = 0; a < 3; ++a) {
    const double period = domain.high[a] - domain.low[a];
    // (A periodic axis without a finite period is the caller's error to report; spanned as open.)
    if (periodic[a] && std::isfinite(period) && period > 0.0) {
      // Shifted copies of the domain that `outer` still overlaps (closed), above and below.
      const double above = std::floor((outer.high[a] - domain.low[a]) / period);
      const double below = std::floor((domain.high[a] - outer.low[a]) / period);
      const double n = std::max({above, below, 0.0});
      span[a] = (2.0 * n + 1.0) * period;
      center[a] = 0.5 * (domain.low[a] + domain.high[a]);
    } else {
      span[a] = outer.high[a] - outer.low[a];
      center[a] = 0.5 * (outer.low[a] + outer.high[a]);
    }
  }
  return cubeOver(center, span, outer);
}

}  // namespace grove
