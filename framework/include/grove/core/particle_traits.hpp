#pragma once
/// @file
/// What grove needs to know of a user's particle types, stated as concepts so that a missing
/// member is reported in one line naming it (see the static_asserts where they are used).
#include <concepts>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/vec3.hpp"

namespace grove {

/// Anything with x, y, z convertible to double: grove::Vec3, FDPS's F64vec alias, a user struct.
template <class V>
concept VectorLike = requires(const V& v) {
  { v.x } -> std::convertible_to<double>;
  { v.y } -> std::convertible_to<double>;
  { v.z } -> std::convertible_to<double>;
};

/// A particle with `getPos()` returning a VectorLike position.
template <class P>
concept HasGetPos = requires(const P& p) {
  { p.getPos() } -> VectorLike;
};

/// A particle with `setPos(const Vec3d&)` (or a setPos that accepts a Vec3d).
template <class P>
concept HasSetPos = requires(P& p, const Vec3d& v) { p.setPos(v); };

/// p.getPos() converted to a Vec3d (each component cast to double). Host and device.
template <class P>
  requires HasGetPos<P>
GROVE_HD_TEMPLATE Vec3d positionOf(const P& p) {
  const auto v = p.getPos();
  return {static_cast<double>(v.x), static_cast<double>(v.y), static_cast<double>(v.z)};
}

/// A position is its own position (so stages over positions take plain Vec3d arrays too).
GROVE_HOST_DEVICE inline Vec3d positionOf(const Vec3d& x) { return x; }

/// A particle with a search radius `getRSearch()` (short-range trees and the long-range search
/// trees).
template <class P>
concept HasRSearch = requires(const P& p) {
  { p.getRSearch() } -> std::convertible_to<double>;
};

/// The box a particle's search sphere covers: positionOf(p) -/+ p.getRSearch() on each axis.
/// Needs: P has getPos() and getRSearch().
template <class P>
Boxd searchBoxOf(const P& p) {
  const Vec3d x = positionOf(p);
  const double r = static_cast<double>(p.getRSearch());
  return {x - Vec3d(r), x + Vec3d(r)};
}

}  // namespace grove
