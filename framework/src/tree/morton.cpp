#include "grove/tree/morton.hpp"

#include <algorithm>

namespace grove {

Boxd RootCell::cellBox(MortonKey prefix, int level) const {
  std::uint32_t c[3];
  cellCoordinates(prefix, level, c);
  const double edge = cellLength(level);
  const Vec3d lo = low + Vec3d(c[0] * edge, c[1] * edge, c[2] * edge);
  return {lo, lo + Vec3d(edge)};
}

RootCell rootCellAround(const Boxd& bounds) {
  if (bounds.isEmpty()) return {Vec3d(-0.5), 1.0};
  const Vec3d size = bounds.size();
  double length = std::max({size.x, size.y, size.z});
  const double magnitude = std::max({std::abs(bounds.low.x), std::abs(bounds.low.y), std::abs(bounds.low.z),
                                     std::abs(bounds.high.x), std::abs(bounds.high.y), std::abs(bounds.high.z)});
  // Widen by a relative 1e-6 (and never to zero), so the upper face is strictly outside.
  length = length * (1.0 + 1e-6) + std::max(magnitude, 1.0) * 1e-12;
  const Vec3d center = bounds.center();
  return {center - Vec3d(0.5 * length), length};
}

}  // namespace grove
